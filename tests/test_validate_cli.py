"""``kubectl dra validate``: human and machine output, exit codes, update pairing, input errors."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml
from click.testing import CliRunner

from kubectl_dra.cli.main import cli


def write(tmp_path: Path, name: str, *docs: Any) -> str:
    path = tmp_path / name
    path.write_text(yaml.safe_dump_all(list(docs), sort_keys=False), encoding="utf-8")
    return str(path)


def claim(name: str, **exactly: Any) -> dict:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"devices": {"requests": [{"name": "req-0", "exactly": {"deviceClassName": "gpu.example.com",
                                                                         **exactly}}]}},
    }


def run(*args: str) -> Any:
    return CliRunner().invoke(cli, ["validate", *args], catch_exceptions=False)


def test_human_output_one_line_per_error_and_ok_lines(tmp_path: Path) -> None:
    path = write(tmp_path, "claims.yaml", claim("good"), claim("bad", count=-1, allocationMode="Some"))
    result = run("-f", path)
    assert result.exit_code == 1
    lines = result.stdout.splitlines()
    assert lines[0] == "ResourceClaim/good: ok"
    assert lines[1].startswith("ResourceClaim/bad: spec.devices.requests[0].exactly.allocationMode: Unsupported value:")
    assert len(lines) == 2


def test_valid_file_exits_zero_and_unknown_kinds_are_not_checked(tmp_path: Path) -> None:
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}}
    result = run("-f", write(tmp_path, "objs.yaml", claim("good"), cm))
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines() == ["ResourceClaim/good: ok", "ConfigMap/x: ok (not checked: not a DRA kind)"]


def test_json_is_one_decision_for_one_object_and_a_list_for_several(tmp_path: Path) -> None:
    one = json.loads(run("-f", write(tmp_path, "one.yaml", claim("a")), "-o", "json").stdout)
    assert isinstance(one, dict) and one["allowed"] is True and one["operation"] == "CREATE"
    assert one["object"]["spec"]["devices"]["requests"][0]["exactly"]["count"] == 1
    assert {"op": "add", "path": "/spec/devices/requests/0/exactly/count", "value": 1} in one["patch"]
    several = json.loads(run("-f", write(tmp_path, "two.yaml", claim("a"), claim("b")), "-o", "json").stdout)
    assert [d["name"] for d in several] == ["a", "b"]


def test_yaml_output_and_feature_gates(tmp_path: Path) -> None:
    obj = claim("a", capacity={"requests": {"memory": "1Gi"}})
    path = write(tmp_path, "c.yaml", obj)
    off = run("-f", path, "-o", "yaml", "--feature-gates", "DRAConsumableCapacity=false")
    doc = yaml.safe_load(off.stdout)
    assert off.exit_code == 0 and "capacity" not in doc["object"]["spec"]["devices"]["requests"][0]["exactly"]
    assert "dropped because the feature gate DRAConsumableCapacity is disabled" in off.stderr
    on = yaml.safe_load(run("-f", path, "-o", "yaml", "--feature-gates", "DRAConsumableCapacity=true").stdout)
    assert on["object"]["spec"]["devices"]["requests"][0]["exactly"]["capacity"] == {"requests": {"memory": "1Gi"}}


def test_admin_access_uses_namespace_labels(tmp_path: Path) -> None:
    path = write(tmp_path, "c.yaml", claim("admin", adminAccess=True))
    gates = ["--feature-gates", "DRAAdminAccess=true"]
    denied = run("-f", path, *gates)
    assert denied.exit_code == 1 and "spec.devices.requests[0].adminAccess: Forbidden" in denied.stdout
    allowed = run("-f", path, *gates, "--namespace-labels", "resource.kubernetes.io/admin-access=true,team=a")
    assert allowed.exit_code == 0, allowed.output


def test_update_pairs_objects_with_stored_ones_by_identity(tmp_path: Path) -> None:
    old = write(tmp_path, "old.yaml", claim("a"), claim("b"))
    changed_b = claim("b", deviceClassName="other.example.com")
    new = write(tmp_path, "new.yaml", claim("b"), changed_b)
    # first "b" equals its stored version, second changes the class: one is ok, one is not
    decisions = json.loads(run("-f", new, "--old", old, "-o", "json").stdout)
    assert [d["operation"] for d in decisions] == ["UPDATE", "UPDATE"]
    assert [d["allowed"] for d in decisions] == [True, False]
    assert [e["field"] for e in decisions[1]["errors"]] == ["spec"]


def test_update_rename_with_one_object_each_side(tmp_path: Path) -> None:
    result = run("-f", write(tmp_path, "n.yaml", claim("new-name")), "--old", write(tmp_path, "o.yaml", claim("a")))
    assert result.exit_code == 1
    assert "ResourceClaim/new-name: metadata.name: Invalid value" in result.stdout


def test_input_errors_exit_two(tmp_path: Path) -> None:
    good = write(tmp_path, "c.yaml", claim("a"))
    bad_yaml = tmp_path / "bad.yaml"
    bad_yaml.write_text("kind: [unclosed\n", encoding="utf-8")
    for args in (
        ["-f", str(bad_yaml)],
        ["-f", good, "--operation", "UPDATE"],
        ["-f", good, "--namespace-labels", "novalue"],
        ["-f", write(tmp_path, "two.yaml", claim("a"), claim("b")), "--old", write(tmp_path, "o.yaml", claim("x"))],
        ["-f", str(tmp_path / "missing.yaml")],
    ):
        result = run(*args)
        assert result.exit_code == 2, (args, result.output)
        assert result.stderr.startswith("error: ")


def test_namespace_flag_fills_missing_namespace(tmp_path: Path) -> None:
    obj = claim("a")
    del obj["metadata"]["namespace"]
    out = json.loads(run("-f", write(tmp_path, "c.yaml", obj), "-n", "team-a", "-o", "json").stdout)
    assert out["namespace"] == "team-a" and out["object"]["metadata"]["namespace"] == "team-a"


def test_v1beta1_claims_and_slices_are_converted_to_v1(tmp_path: Path) -> None:
    beta_claim = {
        "apiVersion": "resource.k8s.io/v1beta1",
        "kind": "ResourceClaim",
        "metadata": {"name": "old-style", "namespace": "default"},
        "spec": {"devices": {"requests": [{"name": "gpu", "deviceClassName": "gpu.example.com", "count": -1}]}},
    }
    beta_slice = {
        "apiVersion": "resource.k8s.io/v1beta1",
        "kind": "ResourceSlice",
        "metadata": {"name": "s"},
        "spec": {"driver": "gpu.example.com", "nodeName": "n", "pool": {"name": "p", "resourceSliceCount": 1},
                 "devices": [{"name": "gpu-0", "basic": {"attributes": {"model": {"string": "a"}}}}]},
    }
    result = run("-f", write(tmp_path, "beta.yaml", beta_claim, beta_slice), "-o", "json")
    decisions = json.loads(result.stdout)
    assert [e["field"] for e in decisions[0]["errors"]] == ["spec.devices.requests[0].exactly.count"]
    assert decisions[1]["allowed"], decisions[1]["errors"]
    assert decisions[1]["object"]["spec"]["devices"][0]["attributes"] == {"model": {"string": "a"}}
    assert "converted from resource.k8s.io/v1beta1" in result.stderr


def test_kubernetes_version_sets_release_defaults(tmp_path: Path) -> None:
    obj = claim("a", tolerations=[{"key": "k", "operator": "Exists"}])
    path = write(tmp_path, "c.yaml", obj)
    old_release = json.loads(run("-f", path, "-o", "json", "--kubernetes-version", "1.34").stdout)
    assert "tolerations" not in old_release["object"]["spec"]["devices"]["requests"][0]["exactly"]
    newer = json.loads(run("-f", path, "-o", "json", "--kubernetes-version", "1.34",
                           "--feature-gates", "DRADeviceTaints=true").stdout)
    assert newer["object"]["spec"]["devices"]["requests"][0]["exactly"]["tolerations"] == [
        {"key": "k", "operator": "Exists"}]
    bad = run("-f", path, "--kubernetes-version", "9.99")
    assert bad.exit_code == 2 and bad.stderr.startswith("error: ")


def test_human_output_keeps_each_error_on_one_line(tmp_path: Path) -> None:
    bad = claim("c1", selectors=[{"cel": {"expression": "device.foo"}}])
    slice_ = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "s1"},
              "spec": {"driver": "gpu.example.com", "nodeName": "n1",
                       "pool": {"name": "p", "generation": 1, "resourceSliceCount": 1},
                       "devices": [{"name": "d", "attributes": {"model": {"string": "x", "int": 3}}}]}}
    result = run("-f", write(tmp_path, "objs.yaml", bad, slice_))
    assert result.exit_code == 1
    lines = result.stdout.splitlines()
    assert len(lines) == 2, lines
    assert lines[0].startswith("ResourceClaim/c1: spec.devices.requests[0].exactly.selectors[0].cel.expression: ")
    assert "<input>:1:7: undefined field 'foo'" in lines[0] and "^" not in lines[0]
    # a structured value is shown as JSON, not as a Python repr
    assert lines[1] == ('ResourceSlice/s1: spec.devices[0].attributes[model]: Invalid value: '
                        '{"string":"x","int":3}: exactly one value must be specified')
    full = json.loads(run("-f", write(tmp_path, "one.yaml", bad), "-o", "json").stdout)
    assert "^" in full["errors"][0]["message"]  # the machine output keeps the caret excerpt


def test_old_without_a_match_names_what_it_holds(tmp_path: Path) -> None:
    result = run("-f", write(tmp_path, "new.yaml", claim("a"), claim("b")),
                 "--old", write(tmp_path, "old.yaml", claim("a"), claim("z")))
    assert result.exit_code == 2
    assert result.stderr.strip() == ("error: ResourceClaim/b in namespace default: no stored object of that kind "
                                     "and name in --old (it holds ResourceClaim/a (namespace default), "
                                     "ResourceClaim/z (namespace default))")


def test_stdin_can_be_read_only_once(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["validate", "-f", "-", "--old", "-"], input=yaml.safe_dump(claim("a")))
    assert result.exit_code == 2
    assert "stdin (-) can be read only once" in result.stderr
