"""Scenarios of our own for the allocator rules the random corpus exposed (tests/data/allocation/,
the conformance format), plus the search's deadline and its exact pruning for requests that ask
for all devices."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from kubectl_dra.allocation import Allocator
from kubectl_dra.cli.main import cli
from kubectl_dra.errors import AllocationError, AllocationTimeout
from kubectl_dra.gates import FeatureGates
from kubectl_dra.limits import TIMED_OUT
from kubectl_dra.preview import candidate_nodes, resolve_targets, run_preview
from kubectl_dra.state import ClusterState
from tests.test_conformance_allocation import check, loaded, run_in_process

DATA = Path(__file__).parent / "data" / "allocation"
RULE_FILES = sorted(DATA.glob("*.yaml"))


@pytest.mark.parametrize("path", RULE_FILES, ids=lambda p: p.stem)
def test_rule_scenario(path: Path, tmp_path: Path) -> None:
    scenario = loaded(path).raw
    assert scenario["name"] == path.stem
    code, document, _ = run_in_process(scenario, tmp_path)
    check(scenario, code, document)


# --------------------------------------------------------------------------- building blocks

NODE = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "node-1", "labels": {}}}


def gpu_class(selector: str = 'device.driver == "gpu.example.com"') -> dict[str, Any]:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu"},
            "spec": {"selectors": [{"cel": {"expression": selector}}]}}


def gpu_slice(count: int, numa: bool = False) -> dict[str, Any]:
    devices = [{"name": f"gpu-{i}", **({"attributes": {"numa": {"int": i}}} if numa else {})} for i in range(count)]
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "gpus"},
            "spec": {"driver": "gpu.example.com", "nodeName": "node-1", "devices": devices,
                     "pool": {"name": "node-1", "generation": 1, "resourceSliceCount": 1}}}


def claim(name: str, count: int | None = 1, all_devices: bool = False, selectors: list[str] = (),
          constraints: list[dict[str, Any]] = ()) -> dict[str, Any]:
    exactly: dict[str, Any] = {"deviceClassName": "gpu"}
    if all_devices:
        exactly["allocationMode"] = "All"
    elif count is not None:
        exactly["count"] = count
    if selectors:
        exactly["selectors"] = [{"cel": {"expression": s}} for s in selectors]
    devices: dict[str, Any] = {"requests": [{"name": "gpus", "exactly": exactly}]}
    if constraints:
        devices["constraints"] = list(constraints)
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
            "metadata": {"name": name, "namespace": "default"}, "spec": {"devices": devices}}


def allocator(*objects: dict[str, Any]) -> Allocator:
    state = ClusterState()
    state.extend([NODE, *objects])
    return Allocator(state, FeatureGates.only([]))


# --------------------------------------------------------------------------- pruning


def test_all_devices_request_after_a_taken_device_is_decided_without_trying_every_combination() -> None:
    """Three GPUs out of 30 for the first claim, then all GPUs: no combination of the first
    claim can leave all 30 to the second. Upstream tries C(30,3) combinations; the pruning
    gives the same answer after a handful of search steps."""
    alloc = allocator(gpu_class(), gpu_slice(30))
    outcome = alloc.allocate(NODE, [claim("three", 3), claim("all", all_devices=True)])
    assert not outcome.allocated
    assert alloc.last_search_steps < 50


def test_all_devices_request_alone_still_gets_every_device() -> None:
    alloc = allocator(gpu_class(), gpu_slice(4))
    outcome = alloc.allocate(NODE, [claim("all", all_devices=True)])
    assert outcome.allocated
    assert [r["device"] for r in outcome.results[0]["devices"]["results"]] == [f"gpu-{i}" for i in range(4)]


def test_pruning_never_hides_an_error_upstream_would_report() -> None:
    """A selector that fails to evaluate on the first claim's devices is an error in upstream's
    exhaustive search; the pruning stands aside and the error is reported."""
    alloc = allocator(gpu_class(), gpu_slice(3))
    broken = claim("broken", 1, selectors=['device.attributes["gpu.example.com"].missing == 1'])
    with pytest.raises(AllocationError, match="CEL runtime error"):
        alloc.allocate(NODE, [broken, claim("all", all_devices=True)])


def test_pruning_stands_aside_when_a_constraint_covers_an_all_devices_request() -> None:
    """A constraint an All request breaks is an error upstream ("cannot add device ... because
    a claim constraint would not be satisfied"): still reported."""
    alloc = allocator(gpu_class(), gpu_slice(3, numa=True))
    both = claim("both", all_devices=True, constraints=[{"matchAttribute": "gpu.example.com/numa"}])
    with pytest.raises(AllocationError, match="constraint would not be satisfied"):
        alloc.allocate(NODE, [claim("first", 1), both])


# --------------------------------------------------------------------------- deadline


def unsatisfiable_match(devices: int) -> tuple[Allocator, list[dict[str, Any]]]:
    """Two devices that must share a NUMA node, among devices that all differ: every pair is
    tried before the search gives up."""
    alloc = allocator(gpu_class(), gpu_slice(devices, numa=True))
    return alloc, [claim("pair", 2, constraints=[{"matchAttribute": "gpu.example.com/numa"}])]


def test_a_passed_deadline_stops_the_search_with_the_schedulers_words() -> None:
    alloc, claims = unsatisfiable_match(600)
    with pytest.raises(AllocationTimeout, match=TIMED_OUT):
        alloc.allocate(NODE, claims, deadline=0.0)


def test_without_a_deadline_the_same_search_runs_to_its_answer() -> None:
    alloc, claims = unsatisfiable_match(60)
    assert not alloc.allocate(NODE, claims).allocated


def test_preview_reports_nodes_past_the_deadline_as_errors() -> None:
    state = ClusterState()
    state.extend([NODE, gpu_class(), gpu_slice(2), claim("one", 1)])
    gates = FeatureGates.default()
    plan = resolve_targets(state, ["claim/default/one"], gates=gates)
    result = run_preview(state, plan, gates, candidate_nodes(state), timeout=1e-9)
    assert [(n.status, n.error) for n in result.nodes] == [("Error", TIMED_OUT)]


def test_timeout_flag_takes_kubernetes_durations(tmp_path: Path) -> None:
    state = tmp_path / "state.yaml"
    state.write_text(yaml.safe_dump_all([NODE, gpu_class(), gpu_slice(2), claim("one", 1)]), encoding="utf-8")
    runner = CliRunner()
    ok = runner.invoke(cli, ["preview", "--state", str(state), "claim/default/one", "--timeout", "1m30s"])
    assert ok.exit_code == 0, ok.output
    bad = runner.invoke(cli, ["preview", "--state", str(state), "claim/default/one", "--timeout", "soon"])
    assert bad.exit_code == 2 and "is not a duration" in bad.output
