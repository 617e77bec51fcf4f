"""One source of node reasons: preview, explain and fit say the same thing about a node, and
the explain package does not depend on the preview package (issue 23, issue 20 item 3)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from kubectl_dra.demo import cluster_path
from kubectl_dra.errors import UsageError
from kubectl_dra.fit import count_fit, stop_reasons
from kubectl_dra.gates import FeatureGates
from kubectl_dra.preview import candidate_nodes, resolve_targets, run_preview
from kubectl_dra.preview.explained import explain_plan
from kubectl_dra.preview.targets import PreviewPlan
from kubectl_dra.state import ClusterState, load_documents, load_state

REPO = Path(__file__).resolve().parent.parent
CLAIMS = sorted((REPO / "kubectl_dra" / "demo" / "claims").glob("*.yaml"))


def _gates(version: str | None) -> FeatureGates:
    return FeatureGates.for_version(version) if version else FeatureGates.default()


def _plan(state: ClusterState, path: Path, gates: FeatureGates) -> PreviewPlan:
    objects = [(obj, str(path)) for obj in load_documents([str(path)])]
    return resolve_targets(state, [], objects, namespace="ml-team", gates=gates)


@pytest.mark.parametrize("version", [None, "1.34", "1.35", "1.36"])
@pytest.mark.parametrize("path", CLAIMS, ids=lambda p: p.stem)
def test_preview_reasons_are_explains(path: Path, version: str | None) -> None:
    """Every node's reason in a preview is explain's reason for it, whatever the gates."""
    state = load_state([str(cluster_path())])
    gates = _gates(version)
    try:
        plan = _plan(state, path, gates)
    except UsageError as exc:  # (a pod with extended resources needs a newer release's gate)
        assert "extended resources" in str(exc)
        return
    preview = run_preview(state, plan, gates, candidate_nodes(state))
    explained = {n.node: n.reason for n in explain_plan(state, gates, plan).nodes}
    for outcome in preview.nodes:
        if outcome.status == "Unschedulable":
            assert list(outcome.reasons) == [explained[outcome.node]], outcome.node
        assert outcome.reason == explained[outcome.node], outcome.node


def _nic_state(nics: int, held: int, gpus_held: int, count: int = 1) -> ClusterState:
    """One node with ``nics`` NICs (``held`` of them allocated) and ``gpus_held`` allocated GPUs."""
    devices = [{"name": f"nic-{i}", "attributes": {"kind": {"string": "nic"}}} for i in range(nics)]
    devices += [{"name": f"gpu-{i}", "attributes": {"kind": {"string": "gpu"}}} for i in range(gpus_held)]
    slice_ = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "s"},
              "spec": {"driver": "d.example.com", "nodeName": "n1", "devices": devices,
                       "pool": {"name": "p", "generation": 1, "resourceSliceCount": 1}}}
    classes = [{"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": kind},
                "spec": {"selectors": [{"cel": {"expression": f'device.attributes["d.example.com"].kind == "{kind}"'}}]}}
               for kind in ("nic", "gpu")]
    held_devices = [f"nic-{i}" for i in range(held)] + [f"gpu-{i}" for i in range(gpus_held)]
    claims = [{"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
               "metadata": {"name": f"holder-{name}", "namespace": "default"},
               "spec": {"devices": {"requests": [{"name": "r", "exactly": {"deviceClassName": "x"}}]}},
               "status": {"allocation": {"devices": {"results": [
                   {"request": "r", "driver": "d.example.com", "pool": "p", "device": name}]}}}}
              for name in held_devices]
    want = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": "want", "namespace": "default"},
            "spec": {"devices": {"requests": [{"name": "nic", "exactly": {"deviceClassName": "nic", "count": count}}]}}}
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}}
    state = ClusterState()
    state.extend([node, *classes, slice_, *claims, want])
    return state


def test_preview_counts_only_the_requests_devices_in_use() -> None:
    """A node with 4 NICs (3 held) and 4 held GPUs, a request for 2 NICs: "3 in use", in
    preview as in explain, never the 7 devices in use on the node."""
    state = _nic_state(4, 3, 4, count=2)
    gates = _gates(None)
    plan = resolve_targets(state, ["want"])
    outcome = run_preview(state, plan, gates, candidate_nodes(state)).nodes[0]
    explained = explain_plan(state, gates, plan).nodes[0]
    assert outcome.status == "Unschedulable"
    assert list(outcome.reasons) == [explained.reason]
    assert "3 in use" in explained.reason and "7" not in explained.reason


def test_fit_stop_reasons_are_explains_on_the_final_state() -> None:
    """fit's reason per node is what explain says on the state with every replica stored."""
    from kubectl_dra.fit import final_state

    state = load_state([str(cluster_path())])
    gates = _gates("1.35")
    plan = _plan(state, REPO / "kubectl_dra" / "demo" / "claims" / "01-single-gpu.yaml", gates)
    nodes = candidate_nodes(state)
    result = count_fit(state, plan, gates, nodes)
    reasons = stop_reasons(state, result, nodes)
    explained = {n.node: n.reason for n in explain_plan(final_state(state, result), gates, result.plan).nodes}
    assert reasons == explained


def _imports(path: Path) -> set[str]:
    """Every module a source file imports, at any depth (function-level and TYPE_CHECKING too)."""
    tree = ast.parse(path.read_text())
    package = ".".join(path.relative_to(REPO).with_suffix("").parts[:-1])
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                parent = ".".join(parts[: len(parts) - node.level + 1])
                base = f"{parent}.{base}" if base else parent
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names)
    return found


def test_explain_does_not_import_preview() -> None:
    """The dependency is one way: preview (and fit) use explain's reasons; explain uses neither."""
    for path in sorted((REPO / "kubectl_dra" / "explain").glob("*.py")):
        bad = {m for m in _imports(path) if m.startswith(("kubectl_dra.preview", "kubectl_dra.fit", "kubectl_dra.cli"))}
        assert not bad, f"{path.name} imports {sorted(bad)}"
