"""--add-nodes / --cordon what-ifs and stranded devices (kubectl_dra.fleet.whatif, .stranded)."""

from __future__ import annotations

import json
from datetime import datetime, UTC
from pathlib import Path

import pytest
import yaml

from kubectl_dra.errors import NotFoundError, UsageError
from kubectl_dra.fleet.stranded import format_age, stranded_claims
from kubectl_dra.fleet.whatif import AddNodes, WhatIf, apply_whatif, copy_node, copy_slice, parse_add_nodes
from kubectl_dra.state import ClusterState, load_state

from .cli_support import run

DEMO = str(Path(__file__).resolve().parent.parent / "kubectl_dra" / "demo" / "cluster.yaml")


def _demo() -> ClusterState:
    return load_state([DEMO])


def test_parse_add_nodes_accepts_node_equals_count() -> None:
    assert parse_add_nodes(["a=2", "b=10"]) == [AddNodes("a", 2), AddNodes("b", 10)]


@pytest.mark.parametrize("value, words", [
    ("a", "expected NODE=N"), ("=3", "expected NODE=N"), ("a=0", "positive integer"), ("a=-1", "positive integer"),
    ("a=x", "positive integer"), ("a=1.5", "positive integer"),
])
def test_parse_add_nodes_refuses_bad_values(value: str, words: str) -> None:
    with pytest.raises(UsageError, match=words):
        parse_add_nodes([value])


def test_parse_add_nodes_refuses_a_node_named_twice() -> None:
    with pytest.raises(UsageError, match="'a' is named twice"):
        parse_add_nodes(["a=1", "a=2"])


def test_apply_leaves_the_loaded_state_alone() -> None:
    state = _demo()
    before = json.dumps(list(state), sort_keys=True)
    out = apply_whatif(state, WhatIf((AddNodes("gpu-node-3", 2),), ("gpu-node-1",)))
    assert json.dumps(list(state), sort_keys=True) == before
    names = [n["metadata"]["name"] for n in out.state.nodes]
    assert "gpu-node-1" not in names
    assert names[-2:] == ["gpu-node-3-hypothetical-1", "gpu-node-3-hypothetical-2"]
    assert out.hypothetical == {"gpu-node-3-hypothetical-1": "gpu-node-3", "gpu-node-3-hypothetical-2": "gpu-node-3"}
    assert not any((s["spec"].get("nodeName")) == "gpu-node-1" for s in out.state.resource_slices)


def test_copies_are_new_pools_of_generation_one_and_shared_pools_stay() -> None:
    state = _demo()
    out = apply_whatif(state, WhatIf((AddNodes("gpu-node-1", 1),)))
    new = [s for s in out.state.resource_slices if s["spec"].get("nodeName") == "gpu-node-1-hypothetical-1"]
    old = [s for s in state.resource_slices if s["spec"].get("nodeName") == "gpu-node-1"]
    assert len(new) == len(old) > 0
    for s in new:
        assert s["spec"]["pool"]["name"] == "gpu-node-1-hypothetical-1"
        assert s["spec"]["pool"]["generation"] == 1
    assert len(out.state.resource_slices) == len(state.resource_slices) + len(old)
    copy = out.state.nodes[-1]
    assert copy["metadata"]["labels"]["kubernetes.io/hostname"] == "gpu-node-1-hypothetical-1"


def test_unknown_nodes_are_named() -> None:
    with pytest.raises(NotFoundError, match="--add-nodes: node 'nope'"):
        apply_whatif(_demo(), WhatIf((AddNodes("nope", 1),)))
    with pytest.raises(NotFoundError, match="--cordon: node 'nope'"):
        apply_whatif(_demo(), WhatIf((), ("nope",)))


def _files_state(tmp_path: Path) -> Path:
    """The demo with two copies of gpu-node-3 written out by hand as files, the way a person
    would add two nodes like it (same objects the what-if makes)."""
    state = _demo()
    source = next(n for n in state.nodes if n["metadata"]["name"] == "gpu-node-3")
    extra = []
    for k in (1, 2):
        new = f"gpu-node-3-hypothetical-{k}"
        extra.append(copy_node(source, "gpu-node-3", new))
        extra += [copy_slice(s, "gpu-node-3", new) for s in state.resource_slices
                  if s["spec"].get("nodeName") == "gpu-node-3"]
    path = tmp_path / "extra.yaml"
    path.write_text(yaml.safe_dump_all(extra))
    return path


@pytest.mark.parametrize("command", [
    ["preview", "pod/trainer-b", "-n", "ml-team", "-o", "json"],
    ["explain", "template/gpu-with-nic", "-n", "ml-team", "-o", "json"],
    ["fit", "template/gpu-with-nic", "-n", "ml-team", "-o", "json"],
    ["usage", "-o", "json"],
])
def test_add_nodes_equals_the_copies_written_as_files(command: list[str], tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    extra = _files_state(tmp_path)
    code_a, out_a, _ = run(capsys, *command, "--state", DEMO, "--add-nodes", "gpu-node-3=2")
    code_b, out_b, _ = run(capsys, *command, "--state", DEMO, "--state", str(extra))
    assert (code_a, json.loads(out_a)) == (code_b, json.loads(out_b))


def test_cordon_takes_the_node_out_of_a_preview(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "preview", "template/gpu-with-nic", "-n", "ml-team", "--state", DEMO,
                         "--cordon", "gpu-node-1", "-o", "name")
    assert "node/gpu-node-1" not in out.split()
    assert "cordoned (not considered): gpu-node-1" in err
    full = run(capsys, "preview", "template/gpu-with-nic", "-n", "ml-team", "--state", DEMO, "-o", "name")[1]
    assert "node/gpu-node-1" in full.split()


@pytest.mark.parametrize("flags, words", [
    (["--add-nodes", "gpu-node-3=0"], "positive integer"),
    (["--add-nodes", "nope=2"], "node 'nope' not found"),
    (["--cordon", "gpu-node-1", "--cordon", "gpu-node-1"], "named twice"),
    (["--add-nodes", "gpu-node-1=1", "--add-nodes", "gpu-node-1=2"], "named twice"),
])
def test_bad_whatif_input_is_one_line_and_exit_2(flags: list[str], words: str,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "usage", "--state", DEMO, *flags)
    assert code == 2
    assert words in err and len(err.strip().splitlines()) == 1


# --------------------------------------------------------------------------- stranded devices


def _claim(name: str, reserved: list[dict[str, str]] | None, created: str | None = "2026-12-01T00:00:00Z") -> dict:
    meta: dict = {"name": name, "namespace": "ns"}
    if created:
        meta["creationTimestamp"] = created
    status: dict = {"allocation": {"devices": {"results": [
        {"request": "r", "driver": "d", "pool": "p", "device": f"dev-{name}"}]}}}
    if reserved is not None:
        status["reservedFor"] = reserved
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": meta, "status": status}


def _pod(name: str, phase: str, uid: str = "") -> dict:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "ns", "uid": uid or name},
            "spec": {"nodeName": "n"}, "status": {"phase": phase}}


def test_stranded_claims_are_those_no_running_pod_uses() -> None:
    state = ClusterState()
    state.extend([
        _pod("running", "Running"), _pod("done", "Succeeded"), _pod("replaced", "Running", uid="new-uid"),
        _claim("unreserved", []),
        _claim("used", [{"resource": "pods", "name": "running", "uid": "running"}]),
        _claim("finished", [{"resource": "pods", "name": "done", "uid": "done"}]),
        _claim("gone", [{"resource": "pods", "name": "vanished", "uid": "x"}]),
        _claim("old-uid", [{"resource": "pods", "name": "replaced", "uid": "old-uid"}]),
        _claim("mixed", [{"resource": "pods", "name": "done", "uid": "done"},
                         {"resource": "pods", "name": "running", "uid": "running"}]),
        _claim("other-consumer", [{"apiGroup": "example.com", "resource": "things", "name": "t", "uid": "u"}]),
    ])
    now = datetime(2026, 12, 3, tzinfo=UTC)
    found = {c.name: c for c in stranded_claims(state, now)}
    assert set(found) == {"unreserved", "finished", "gone", "old-uid"}
    assert found["finished"].devices == ("d/p/dev-finished",)
    assert found["finished"].age_seconds == 2 * 86400
    assert "done (Succeeded)" in found["finished"].why and "vanished (gone)" in found["gone"].why


def test_stranded_since_is_the_last_status_write() -> None:
    claim = _claim("c", [])
    claim["metadata"]["managedFields"] = [
        {"manager": "kube-scheduler", "subresource": "status", "time": "2026-12-02T00:00:00Z"},
        {"manager": "kubectl", "time": "2026-12-02T12:00:00Z"}]
    state = ClusterState()
    state.extend([claim])
    (found,) = stranded_claims(state, datetime(2026, 12, 2, 6, tzinfo=UTC))
    assert found.since == "2026-12-02T00:00:00Z" and format_age(found.age_seconds) == "6h"


def test_without_pods_in_the_state_only_unreserved_claims_are_stranded() -> None:
    state = ClusterState()
    state.extend([_claim("a", []), _claim("b", [{"resource": "pods", "name": "p", "uid": "p"}])])
    assert [c.name for c in stranded_claims(state)] == ["a"]


def test_usage_wide_lists_stranded_devices(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "usage", "--state", DEMO, "-o", "wide")
    assert code == 0
    assert "1 stranded claim holds 1 device" in out and "ml-team/render-vgpu" in out
