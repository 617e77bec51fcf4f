"""usage's pool verdict is the allocator's (issue 9 item 4): for a table of pools, under
DRAPartitionableDevices on and off, the POOL-STATUS and notes ``kubectl dra usage`` shows for a
pool on a node say what the allocator's own Pool for that node says (incomplete, invalid and
why; a slice that pool gathering skips for a gate that is off counts as absent). Also the cases where usage's old copy of the rules
disagreed with the allocator, which usage now follows."""

from __future__ import annotations

from typing import Any

import pytest

from kubectl_dra.allocation import Features
from kubectl_dra.allocation.index import ClusterIndex
from kubectl_dra.allocation.pools import Pool
from kubectl_dra.errors import DraError
from kubectl_dra.gates import FeatureGates, Gate
from kubectl_dra.state import ClusterState
from kubectl_dra.usage import COMPLETE, INCOMPLETE, INVALID, UsageRow, compute_usage

DRIVER = "gpu.example.com"


def rslice(name: str, node: str, devices: list[dict], *, pool: str = "p", generation: int = 1, count: int = 1,
           **spec: Any) -> dict:
    body: dict[str, Any] = {"driver": DRIVER, "nodeName": node,
                            "pool": {"name": pool, "generation": generation, "resourceSliceCount": count}, **spec}
    if devices:
        body["devices"] = devices
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": name}, "spec": body}


def counters(name: str, node: str, *sets: str, count: int = 2, **kw: Any) -> dict:
    shared = [{"name": s, "counters": {"memory": {"value": "80Gi"}}} for s in sets]
    return rslice(name, node, [], count=count, sharedCounters=shared, **kw)


def part(name: str, counter_set: str = "gpu-0", counter: str = "memory", groups: list[str] | None = None) -> dict:
    use: dict[str, Any] = {"counterSet": counter_set, "counters": {counter: {"value": "40Gi"}}}
    if groups:
        use["compatibilityGroups"] = groups
    return {"name": name, "consumesCounters": [use]}


#: name -> the pool's slices (driver gpu.example.com, pool p)
POOLS: dict[str, list[dict]] = {
    "complete": [rslice("s", "node-1", [{"name": "a"}])],
    "incomplete": [rslice("s-1", "node-1", [{"name": "a"}], count=2)],
    "more slices than resourceSliceCount": [rslice("s-1", "node-1", [{"name": "a"}]),
                                            rslice("s-2", "node-1", [{"name": "b"}])],
    "newest generation incomplete": [rslice("old", "node-1", [{"name": "a"}]),
                                     rslice("new", "node-1", [{"name": "a"}], generation=2, count=2)],
    # node-1 sees only generation 1 (one of two): obsolete there; node-2 has generation 2, whole
    "obsolete generation": [rslice("old", "node-1", [{"name": "a"}], count=2),
                            rslice("new", "node-2", [{"name": "b"}], generation=2)],
    "duplicate device": [rslice("s-1", "node-1", [{"name": "a"}], count=2),
                         rslice("s-2", "node-1", [{"name": "a"}], count=2)],
    "duplicate counter set": [counters("c-1", "node-1", "gpu-0", count=3), counters("c-2", "node-1", "gpu-0", count=3),
                              rslice("g", "node-1", [part("half-0")], count=3)],
    "duplicate device and counter set": [
        counters("a-counters", "node-1", "gpu-0", "gpu-0"), rslice("b-gpus", "node-1", [part("x"), part("x")], count=2)],
    "unknown counter set": [counters("c", "node-1", "gpu-0"), rslice("g", "node-1", [part("half-0", "gpu-9")], count=2)],
    "unknown counter": [counters("c", "node-1", "gpu-0"), rslice("g", "node-1", [part("half-0", counter="cores")], count=2)],
    "compatibility groups": [counters("c", "node-1", "gpu-0"),
                             rslice("g", "node-1", [part("mig-0", groups=["mig"])], count=2)],
    "partitionable, complete": [counters("c", "node-1", "gpu-0"), rslice("g", "node-1", [part("half-0")], count=2)],
    "per-device node selection": [rslice("s", "node-1", [{"name": "a", "nodeName": "node-1"}],
                                         perDeviceNodeSelection=True)],
}

#: DRAPartitionableDevices on/off (and compatibility groups on) over 1.37's defaults
GATES = {
    "partitionable on": "",
    "partitionable off": "DRAPartitionableDevices=false",
    "compatibility groups on": "DRADeviceCompatibilityGroups=true",
}


def state_of(slices: list[dict]) -> ClusterState:
    state = ClusterState()
    state.extend([*slices, *({"apiVersion": "v1", "kind": "Node", "metadata": {"name": n}} for n in ("node-1", "node-2"))])
    return state


def allocator_pool(state: ClusterState, gates: FeatureGates, node: str) -> Pool | None:
    """The allocator's own Pool for (driver, p) on ``node``, as an Allocator gathers it."""
    index = ClusterIndex(state).slices(Features.from_gates(gates))
    seen = index.pools_for({"apiVersion": "v1", "kind": "Node", "metadata": {"name": node}})
    found = [p for p in (*seen.pools, *seen.problems) if p.id == (DRIVER, "p")]
    return found[0] if found else None


def expected_row(pool: Pool | None) -> tuple[str, list[str] | None, bool]:
    """(status, notes or None for 'not about the pool', incomplete flag) usage must show."""
    if pool is not None and pool.incomplete:
        return INCOMPLETE, None, True
    if pool is not None and pool.invalid:
        return INVALID, [pool.invalid_reason], False
    return COMPLETE, None, False


def pool_rows(state: ClusterState, gates: FeatureGates) -> list[UsageRow]:
    return [r for r in compute_usage(state, gates=gates).rows if r.node.startswith("node-")]


@pytest.mark.parametrize("gate_case", sorted(GATES))
@pytest.mark.parametrize("pool_case", sorted(POOLS))
def test_usage_shows_the_allocators_verdict_for_the_pool_on_its_node(pool_case: str, gate_case: str) -> None:
    state = state_of(POOLS[pool_case])
    gates = FeatureGates.default().with_overrides(GATES[gate_case]) if GATES[gate_case] else FeatureGates.default()
    rows = pool_rows(state, gates)
    assert rows, "usage shows the pool on some node"
    for row in rows:
        status, notes, incomplete = expected_row(allocator_pool(state, gates, row.node))
        assert (row.status, row.incomplete) == (status, incomplete), (row.node, row.notes)
        if notes is not None:
            assert row.notes == notes
        if status == INCOMPLETE and not notes:
            assert "slices published" in row.notes[0]


def test_the_table_covers_every_verdict() -> None:
    """The table above is worth something only if the allocator says each thing at least once."""
    said = set()
    for slices in POOLS.values():
        state = state_of(slices)
        for spec in GATES.values():
            gates = FeatureGates.default().with_overrides(spec) if spec else FeatureGates.default()
            for node in ("node-1", "node-2"):
                pool = allocator_pool(state, gates, node)
                said.add("none" if pool is None else "incomplete" if pool.incomplete
                         else "invalid" if pool.invalid else "complete")
    assert said == {"none", "incomplete", "invalid", "complete"}


def test_a_slice_using_compatibility_groups_is_absent_with_the_gate_off() -> None:
    """Pool gathering skips a slice using compatibility groups while DRADeviceCompatibilityGroups
    is off, and does not count it among the pool's slices either: here the pool is the
    counter slice alone, one of two slices, so incomplete; usage says which slice is not
    counted. Without another slice the pool does not exist for the allocator and usage
    notes the devices it cannot use."""
    gates = FeatureGates.default()
    assert not gates.enabled(Gate.DEVICE_COMPATIBILITY_GROUPS)
    state = state_of(POOLS["compatibility groups"])
    pool = allocator_pool(state, gates, "node-1")
    assert pool is not None and pool.incomplete
    (row,) = pool_rows(state, gates)
    assert (row.status, row.incomplete) == (INCOMPLETE, True)
    assert row.notes == [f"1 of 2 slices published (not counting 1 using device compatibility groups, which the "
                         f"allocator ignores with {Gate.DEVICE_COMPATIBILITY_GROUPS} off)"]
    alone = state_of([rslice("g", "node-1", [part("mig-0", groups=["mig"])])])
    assert allocator_pool(alone, gates, "node-1") is None
    (row,) = pool_rows(alone, gates)
    assert (row.status, row.incomplete) == (COMPLETE, False)
    assert row.notes == [f"1 device in slices using device compatibility groups unusable with "
                         f"{Gate.DEVICE_COMPATIBILITY_GROUPS} off"]


# --------------------------------------------------------------------------- where the old copy disagreed


def test_more_slices_than_announced_is_incomplete_as_for_the_allocator() -> None:
    """Changed: usage's old copy called a pool complete when it had *more* slices than
    resourceSliceCount; the allocator compares with != and skips it as incomplete."""
    state = state_of(POOLS["more slices than resourceSliceCount"])
    (row,) = pool_rows(state, FeatureGates.default())
    assert (row.status, row.notes, row.incomplete) == (INCOMPLETE, ["2 of 1 slices published"], True)
    assert allocator_pool(state, FeatureGates.default(), "node-1").incomplete  # type: ignore[union-attr]


def test_the_invalid_reason_is_the_allocators_when_a_pool_has_two_faults() -> None:
    """Changed: the old copy reported whichever duplicate it met first in slice-name order (here
    the counter set); the allocator checks device names first."""
    state = state_of(POOLS["duplicate device and counter set"])
    (row,) = pool_rows(state, FeatureGates.default())
    assert (row.status, row.notes) == (INVALID, ["duplicate device name x"])
    assert allocator_pool(state, FeatureGates.default(), "node-1").invalid_reason == "duplicate device name x"  # type: ignore[union-attr]


def test_an_empty_binding_conditions_list_is_not_refused() -> None:
    """Changed: the old copy counted ``bindingConditions: []`` as binding conditions and noted the
    device as unusable with DRADeviceBindingConditions off; the search refuses only devices
    that have some, so the device is usable and there is no note."""
    state = state_of([rslice("s", "node-1", [{"name": "a", "bindingConditions": []},
                                             {"name": "b", "bindingConditions": ["ready"],
                                              "bindingFailureConditions": ["failed"]}])])
    gates = FeatureGates.default().with_overrides("DRADeviceBindingConditions=false")
    (row,) = pool_rows(state, gates)
    assert row.notes == [f"1 device with binding conditions unusable with {Gate.DEVICE_BINDING_CONDITIONS} off"]


def test_a_counter_that_is_not_a_quantity_is_refused_as_the_allocator_refuses_it() -> None:
    """Changed (library only: the CLI's loader refuses such a file before either runs): usage
    counted an unreadable shared counter as 0; it now reads slices through the allocator's
    views and stops with the error the allocator's index stops with (a DraError, exit 2)."""
    bad = counters("c", "node-1", "gpu-0")
    bad["spec"]["sharedCounters"][0]["counters"]["memory"]["value"] = "lots"
    state = state_of([bad, rslice("g", "node-1", [part("half-0")], count=2)])
    with pytest.raises(DraError, match="quantities must match") as from_usage:
        compute_usage(state, gates=FeatureGates.default())
    with pytest.raises(DraError) as from_allocator:
        ClusterIndex(state)
    assert str(from_usage.value) == str(from_allocator.value)
