"""The device metadata protocol core: layout, stream decoding, merging, checks, expectations."""

from __future__ import annotations

import json

import pytest

from kubectl_dra.errors import MetadataError
from kubectl_dra.metadata import (
    claim_directory,
    claim_file_path,
    compare_expected,
    decode_stream,
    expected_files,
    merge_requests,
    parse_location,
    template_file_path,
)
from kubectl_dra.metadata.check import RULES, check_file
from kubectl_dra.metadata.protocol import version_priority
from tests.metadata_builders import V1ALPHA1, V1BETA1, both_versions, device, metadata_object, stream

BASE = "/var/run/kubernetes.io/dra-device-attributes"
GOOD_PATH = f"{BASE}/resourceclaims/claim-1/gpu/gpu.example.com-metadata.json"


def test_paths_use_the_top_level_request_name():
    assert claim_file_path("gpu.example.com", "c", "gpu/big") == f"{BASE}/resourceclaims/c/gpu/gpu.example.com-metadata.json"
    assert template_file_path("nic.example.com", "nic", "nic") == (
        f"{BASE}/resourceclaimtemplates/nic/nic/nic.example.com-metadata.json")


@pytest.mark.parametrize("path, subdir, claim, req, driver, problem", [
    (GOOD_PATH, "resourceclaims", "claim-1", "gpu", "gpu.example.com", False),
    ("copy/resourceclaimtemplates/p/r/d.io-metadata.json", "resourceclaimtemplates", "p", "r", "d.io", False),
    ("resourceclaims/c/gpu/metadata.json", None, None, None, None, True),
    ("resourceclaims/c/gpu.example.com-metadata.json", "resourceclaims", None, None, "gpu.example.com", True),
    ("elsewhere/c/r/gpu.example.com-metadata.json", None, None, None, "gpu.example.com", True),
])
def test_parse_location(path, subdir, claim, req, driver, problem):
    loc = parse_location(path)
    assert (loc.subdir, loc.claim, loc.request, loc.driver) == (subdir, claim, req, driver)
    assert (loc.problem is not None) == problem


def test_decoder_takes_the_first_known_version():
    text = both_versions(claim="c", requests={"gpu": [device("gpu-0")]})
    decoded = decode_stream(text)
    assert decoded.api_version == V1BETA1
    assert len(decoded.objects) == 2


def test_unknown_future_versions_first_are_skipped():
    future = metadata_object("c", {"gpu": [device("gpu-9")]}, version="metadata.resource.k8s.io/v2")
    known = metadata_object("c", {"gpu": [device("gpu-0")]}, version=V1ALPHA1)
    decoded = decode_stream(stream(future, known))
    assert decoded.api_version == V1ALPHA1
    assert decoded.skipped_versions == ["metadata.resource.k8s.io/v2"]
    assert decoded.object["requests"][0]["devices"][0]["name"] == "gpu-0"


@pytest.mark.parametrize("text, message", [
    ("", "no metadata objects found in stream"),
    ("   \n", "no metadata objects found in stream"),
    (stream(metadata_object("c", {}, version="metadata.resource.k8s.io/v9")),
     "no compatible metadata version found in stream (unknown versions: metadata.resource.k8s.io/v9)"),
    ('{"kind": "DeviceMetadata"', "read metadata object from stream"),
    ('{"kind": "DeviceMetadata"}', "decode metadata object: Object 'apiVersion' is missing"),
    (json.dumps({"apiVersion": V1ALPHA1, "kind": "Other"}), "no kind 'Other' is registered"),
    (json.dumps({"apiVersion": V1ALPHA1, "kind": "DeviceMetadata", "requests": {}}), "requests: expected a list"),
])
def test_decoder_errors_match_upstream(text, message):
    with pytest.raises(MetadataError) as err:
        decode_stream(text, "f.json")
    assert message in str(err.value)
    assert str(err.value).startswith("f.json: ")


def test_merging_drivers_files_of_one_request_concatenates_devices():
    a = metadata_object("c", {"gpu": [device("gpu-0")]}, pod_claim_name="gpu")
    b = metadata_object("c", {"gpu": [device("nic-0", driver="nic.example.com")], "gpu/sub": [device("x")]})
    merged = merge_requests([a, b])
    assert merged["podClaimName"] == "gpu"
    assert [r["name"] for r in merged["requests"]] == ["gpu", "gpu/sub"]
    assert [d["name"] for d in merged["requests"][0]["devices"]] == ["gpu-0", "nic-0"]


def test_version_priority_is_kubernetes_order():
    order = ["v1alpha1", "v1beta1", "v1beta2", "v2beta1", "v1", "v2"]
    keys = [version_priority(f"g/{v}") for v in order]
    assert keys == sorted(keys)
    assert version_priority("g/foo") < version_priority("g/v1alpha1")


def _rules(path: str, text: str) -> set[str]:
    return {v.rule for v in check_file(path, text)[1]}


GOOD = both_versions(claim="claim-1", requests={"gpu": [device("gpu-0")], "gpu/big": [device("gpu-1")]})

# (rule, path, text) that break exactly that rule; each rule also passes on GOOD_PATH/GOOD.
VIOLATIONS = [
    ("file-name", f"{BASE}/resourceclaims/claim-1/gpu/metadata.json", GOOD),
    ("layout", f"{BASE}/resourceclaims/claim-1/gpu.example.com-metadata.json", GOOD),
    ("undecodable", GOOD_PATH, stream(metadata_object("claim-1", {}, version="metadata.resource.k8s.io/v7"))),
    ("version-order", GOOD_PATH, stream(metadata_object("claim-1", {"gpu": []}, version=V1ALPHA1),
                                        metadata_object("claim-1", {"gpu": []}, version=V1BETA1))),
    ("disagree", GOOD_PATH, stream(metadata_object("claim-1", {"gpu": [device("gpu-0")]}, version=V1BETA1),
                                   metadata_object("claim-1", {"gpu": [device("gpu-1")]}, version=V1ALPHA1))),
    ("driver", GOOD_PATH, both_versions(claim="claim-1", requests={"gpu": [device("x", driver="nic.example.com")]})),
    ("generation", GOOD_PATH, both_versions(claim="claim-1", requests={"gpu": []}, generation=None)),
    ("generation", GOOD_PATH, both_versions(claim="claim-1", requests={"gpu": []}, generation=0)),
    ("request-name", GOOD_PATH, both_versions(claim="claim-1", requests={"gpux": [device("gpu-0")]})),
    ("claim-name", GOOD_PATH, both_versions(claim="other", requests={"gpu": []})),
    ("claim-name", f"{BASE}/resourceclaimtemplates/gpu/gpu/gpu.example.com-metadata.json",
     both_versions(claim="pod-gpu-abc", requests={"gpu": []}, pod_claim_name="wrong")),
    ("fields", GOOD_PATH, both_versions(claim="claim-1", requests={"gpu": [device("GPU_0")]})),
]


def test_good_file_has_no_violations():
    assert check_file(GOOD_PATH, GOOD)[1] == []
    tmpl = both_versions(claim="pod-gpu-abc", requests={"gpu": [device("gpu-0")]}, pod_claim_name="gpu")
    assert check_file(f"{BASE}/resourceclaimtemplates/gpu/gpu/gpu.example.com-metadata.json", tmpl)[1] == []


@pytest.mark.parametrize("rule, path, text", VIOLATIONS, ids=[f"{r}-{i}" for i, (r, _, _) in enumerate(VIOLATIONS)])
def test_each_rule_detects_its_violation(rule, path, text):
    violations = check_file(path, text)[1]
    assert rule in {v.rule for v in violations}
    for v in violations:
        assert v.file == path and v.message and v.hint


def test_every_rule_has_a_violation_case():
    assert {rule for rule, _, _ in VIOLATIONS} == set(RULES)


def test_unknown_future_version_first_is_in_order():
    future = metadata_object("claim-1", {"gpu": []}, version="metadata.resource.k8s.io/v2")
    assert _rules(GOOD_PATH, stream(future, metadata_object("claim-1", {"gpu": []}, version=V1BETA1))) == set()


def _claim(name="claim-1", annotations=None, results=()):
    meta = {"name": name, "namespace": "default"}
    if annotations:
        meta["annotations"] = annotations
    return {"kind": "ResourceClaim", "metadata": meta,
            "status": {"allocation": {"devices": {"results": list(results)}}}}


SLICES = [{
    "kind": "ResourceSlice", "metadata": {"name": "s"},
    "spec": {"driver": "gpu.example.com", "pool": {"name": "node-1", "generation": 2, "resourceSliceCount": 1},
             "devices": [{"name": "gpu-0", "attributes": {"model": {"string": "H100"}}},
                         {"name": "gpu-1", "attributes": {"model": {"string": "H100"}}}]},
}]


def test_expected_files_group_by_request_and_driver():
    claim = _claim(results=[
        {"request": "gpu/big", "driver": "gpu.example.com", "pool": "node-1", "device": "gpu-0"},
        {"request": "gpu/big", "driver": "gpu.example.com", "pool": "node-1", "device": "gpu-1"},
    ])
    (ef,) = expected_files(claim, SLICES)
    assert ef.path == claim_file_path("gpu.example.com", "claim-1", "gpu")
    assert [d["name"] for d in ef.devices["gpu/big"]] == ["gpu-0", "gpu-1"]
    assert ef.devices["gpu/big"][0]["attributes"] == {"model": {"string": "H100"}}


def test_expected_uses_template_path_for_generated_claims():
    claim = _claim("pod-gpu-x1", {"resource.kubernetes.io/pod-claim-name": "gpu"},
                   [{"request": "r", "driver": "gpu.example.com", "pool": "node-1", "device": "gpu-0"}])
    assert expected_files(claim, SLICES)[0].path == template_file_path("gpu.example.com", "gpu", "r")
    assert claim_directory(claim) == f"{BASE}/resourceclaimtemplates/gpu"


def test_compare_expected_reports_each_kind_of_difference():
    claim = _claim(results=[{"request": "gpu", "driver": "gpu.example.com", "pool": "node-1", "device": "gpu-0"}])
    expected = expected_files(claim, SLICES)
    path = expected[0].path
    same = decode_stream(both_versions(claim="claim-1", requests={
        "gpu": [device("gpu-0", model="H100")]}))
    assert compare_expected(expected, {path: same}, claim_directory(claim)) == []
    wrong = decode_stream(both_versions(claim="claim-1", requests={
        "gpu": [device("gpu-1", model="A100")]}))
    kinds = {d.kind for d in compare_expected(expected, {path: wrong}, claim_directory(claim))}
    assert kinds == {"missing-device", "unexpected-device"}
    differs = decode_stream(both_versions(claim="claim-1", requests={"gpu": [device("gpu-0", model="A100")]}))
    assert [d.kind for d in compare_expected(expected, {path: differs})] == ["attribute-differs"]
    bare = decode_stream(both_versions(claim="claim-1", requests={"gpu": [device("gpu-0")]}))
    (note,) = compare_expected(expected, {path: bare})
    assert (note.kind, note.severity) == ("attribute-missing", "note")
    extra = claim_directory(claim) + "/gpu/nic.example.com-metadata.json"
    diffs = compare_expected(expected, {extra: same}, claim_directory(claim))
    assert {d.kind for d in diffs} == {"missing-file", "unexpected-file"}
    assert [d.kind for d in compare_expected(expected, {path: "broken"})] == ["undecodable"]


def test_fields_rule_names_each_bad_value():
    """The DeviceMetadata type's own rules: names, pools, attributes with one value, CIDR addresses."""
    bad = device("gpu-0", pool="Pool_A")
    bad["attributes"] = {"model": {"string": "x", "int": 1}, "bad key": {"int": 2}}
    bad["networkData"] = {"ips": ["10.0.0.1"]}
    violations = [v for v in check_file(GOOD_PATH, both_versions(claim="claim-1", requests={"gpu": [bad]}))[1]
                  if v.rule == "fields"]
    fields = [v.message.split(":")[0] for v in violations]
    assert fields == ["requests[0].devices[0].pool", "requests[0].devices[0].attributes[bad key]",
                      "requests[0].devices[0].attributes[model]", "requests[0].devices[0].networkData.ips[0]"]
    too_many = device("gpu-0")
    too_many["attributes"] = {f"a{i}": {"int": i} for i in range(33)}
    messages = [v.message for v in check_file(GOOD_PATH, both_versions(claim="claim-1", requests={"gpu": [too_many]}))[1]]
    assert messages == ["requests[0].devices[0].attributes: Too many: 33: must have at most 32 items"]
