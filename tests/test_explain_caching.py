"""Explain and preview remember answers across runs over the same objects (selectability
and rejection words on device views, in-use rejections, restated in-use rejections): a
second, warm run must say exactly what the first, cold one said, and answers remembered
for one request must never leak into another whose words differ."""

from __future__ import annotations

import json
from typing import Any

from kubectl_dra.explain import explanation_to_dict
from kubectl_dra.allocation.trace import RejectionCode
from kubectl_dra.gates import FeatureGates
from kubectl_dra.preview import candidate_nodes, resolve_targets, run_preview

from .test_explain import DRIVER, by_node, claim, device_class, explain, gpu, node, resource_slice, state_of

SAME_SELECTOR = f'device.attributes["{DRIVER}"].type == "gpu"'


def cluster() -> Any:
    """Two classes with the very same selector, GPUs and NICs, one GPU held by a claim."""
    return state_of(
        device_class("gpu-a", SAME_SELECTOR), device_class("gpu-b", SAME_SELECTOR),
        *(node(f"node-{i}") for i in range(3)),
        *(resource_slice(f"node-{i}", [gpu("gpu-0"), gpu("nic-0", kind="nic"), gpu("gpu-1")]) for i in range(3)),
        claim("holder", allocated_on=("node-1", "gpu-0")),
        claim("train-a", cls="gpu-a", count=2), claim("train-b", cls="gpu-b", count=2),
        claim("odd", selectors=[f'device.attributes["{DRIVER}"].type == "nic"'], cls="gpu-a"),
    )


def _document(state: Any, target: str) -> str:
    return json.dumps(explanation_to_dict(explain(state, target)), sort_keys=True)


def test_warm_explain_says_what_the_cold_one_said():
    state = cluster()
    for target in ("claim/train-a", "claim/train-b", "claim/odd"):
        cold = _document(state, target)
        assert _document(state, target) == cold
        assert _document(state, target) == cold


def test_remembered_reasons_name_their_own_class():
    """gpu-a and gpu-b share a selector (so the selectability answer is shared) but the
    words of a rejection name the class: each explain must name its own."""
    state = cluster()
    for _ in range(2):
        for cls, target in (("gpu-a", "claim/train-a"), ("gpu-b", "claim/train-b")):
            req = by_node(explain(state, target))["node-0"].requests[0]
            (device, rejection), = req.rejections[RejectionCode.NOT_IN_CLASS]
            assert device[2] == "nic-0"
            assert rejection.details["class"] == cls and f"device class {cls} " in rejection.message


def test_restated_in_use_rejection_follows_the_request_selector():
    """An in-use GPU reads "in use" for a request that wants GPUs, but "request selector
    false" for one that wants NICs, however often and in whichever order they are explained."""
    state = cluster()
    for _ in range(2):
        held = by_node(explain(state, "claim/train-a"))["node-1"].requests[0]
        assert [d[2] for d, _ in held.rejections[RejectionCode.IN_USE]] == ["gpu-0"]
        odd = by_node(explain(state, "claim/odd"))["node-1"].requests[0]
        restated = dict(odd.rejections[RejectionCode.REQUEST_SELECTOR_FALSE])
        assert restated[(DRIVER, "node-1", "gpu-0")].details["inUse"] is True
        assert RejectionCode.IN_USE not in odd.rejections


def test_preview_answers_do_not_depend_on_earlier_previews():
    state = cluster()
    gates = FeatureGates.default()

    def outcome(target: str) -> list[tuple[str, str, Any]]:
        plan = resolve_targets(state, [target], namespace="default", gates=gates)
        result = run_preview(state, plan, gates, candidate_nodes(state))
        return [(n.node, n.status, [a for _, a in n.allocations]) for n in result.nodes]

    first = {t: outcome(t) for t in ("claim/train-a", "claim/odd", "claim/train-b")}
    for target in ("claim/odd", "claim/train-b", "claim/train-a"):
        assert outcome(target) == first[target]
    # two GPUs are free on node-0 and node-2 only; no NIC matches class gpu-a
    assert [n for n, status, _ in first["claim/train-a"] if status == "Allocated"] == ["node-0", "node-2"]
    assert all(status == "Unschedulable" for _, status, _ in first["claim/odd"])


def test_cel_runtime_error_is_reported_the_same_every_time():
    """A selector that fails at runtime on some devices: the error (cached with the device's
    results) must surface again, with its context, on every later preview."""
    state = state_of(
        device_class("gpu-a", f'device.attributes["{DRIVER}"].memory > 1'),
        node("node-0"), resource_slice("node-0", [gpu("gpu-0")]),
        claim("train-a", cls="gpu-a"),
    )
    gates = FeatureGates.default()
    plan = resolve_targets(state, ["claim/train-a"], namespace="default", gates=gates)
    errors = []
    for _ in range(3):
        (n,) = run_preview(state, plan, gates, candidate_nodes(state)).nodes
        assert n.status == "Error"
        errors.append(n.error)
    assert errors[0] and "class gpu-a: selector #0" in errors[0] and len(set(errors)) == 1
