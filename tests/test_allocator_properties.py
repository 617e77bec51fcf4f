"""Invariants of the allocator as properties over random clusters and claims (issue 8, item 3).

Scenarios come from our own generator (``tests/allocation_strategies.py``). Each property
is its own test:

1. a device appears at most once per request of a claim (multi-allocatable devices too),
   and a device that cannot be shared is not handed out twice or while in use;
2. no shared counter and no consumable capacity is exceeded, counting the devices already in
   use plus the new results;
3. every matchAttribute/distinctAttribute constraint holds on the result;
4. the answer does not depend on the order the objects were loaded in;
5. ``preview`` and ``explain`` agree (through their ``-o json`` contracts);
6. the same input gives the same answer: twice in one process (also after other scenarios
   ran) and in a fresh process;

and, beside them: every allocated device is usable by its request (count, class, node,
taints, binding conditions, admin access), and the checks themselves reject broken answers.

Examples are derandomized (a fixed sequence: CI is reproducible) unless
``DRA_PROPERTIES_EXPLORE=1`` is set outside CI; ``DRA_PROPERTIES_SCALE=N`` multiplies the
number of examples and ``DRA_PROPERTIES_LARGE=1`` draws larger clusters, for longer local runs. A failing example is printed as a scenario in the
conformance file format.
"""

from __future__ import annotations

import copy
import json
import os
import random
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any, Iterable, Mapping

import pytest
import yaml
from click.testing import CliRunner
from hypothesis import HealthCheck, event, given, note, reject, settings
from hypothesis import strategies as st

from kubectl_dra.allocation import Allocator
from kubectl_dra.cli.main import cli
from kubectl_dra.errors import AllocationError, AllocationTimeout
from kubectl_dra.gates import FeatureGates
from kubectl_dra.limits import TIMED_OUT
from kubectl_dra.quantity import Quantity
from kubectl_dra.state import ClusterState
from tests.allocation_strategies import NODE, Scenario, scenarios
from tests.test_conformance_allocation import claim_targets, gates_flag, write_state

Obj = dict[str, Any]
DeviceId = tuple[str, str, str]

EXPLORE = os.environ.get("DRA_PROPERTIES_EXPLORE") == "1" and not os.environ.get("CI")
SCALE = max(1, int(os.environ.get("DRA_PROPERTIES_SCALE") or "1"))
#: DRA_PROPERTIES_LARGE=1: larger clusters and more claims (slower; for local runs)
LARGE = os.environ.get("DRA_PROPERTIES_LARGE") == "1" and not os.environ.get("CI")
BASE = settings(deadline=None, derandomize=not EXPLORE, database=None, print_blob=True,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much])


def clusters() -> st.SearchStrategy[Scenario]:
    return scenarios(large=LARGE)


def examples(n: int) -> settings:
    return settings(BASE, max_examples=n * SCALE)


#: a search that takes longer than this is abandoned (the example is discarded, not failed):
#: generated scenarios are small, this only guards the file's run time on a loaded machine
SEARCH_SECONDS = 10.0
#: the limit for the two runs compared across processes (see test_same_answer_in_a_fresh_process)
FRESH_PROCESS_SECONDS = 120.0


# --------------------------------------------------------------------------- running


def load(objects: Iterable[Obj]) -> ClusterState:
    state = ClusterState()
    state.extend(copy.deepcopy(list(objects)))
    return state


def claims_of(state: ClusterState, names: Iterable[str]) -> list[Obj]:
    found = [state.find("ResourceClaim", name, "default") for name in names]
    assert all(c is not None for c in found)
    return found  # type: ignore[return-value]


class _AsYaml:
    """A scenario rendered (as a conformance scenario file) only when hypothesis reports it."""

    def __init__(self, sc: Scenario) -> None:
        self.sc = sc

    def __repr__(self) -> str:
        return "scenario:\n" + yaml.safe_dump(self.sc.as_document(), sort_keys=False)


def show(sc: Scenario) -> None:
    """Put the scenario into hypothesis' report of the minimal failing example."""
    note(_AsYaml(sc))


def answer(allocator: Allocator, node: Obj, claims: list[Obj]) -> tuple[Any, ...]:
    """("allocated", results, score) | ("unschedulable",) | ("error", message); a search
    that does not end in time discards the example."""
    try:
        outcome = allocator.allocate(node, claims, deadline=time.monotonic() + SEARCH_SECONDS)
    except AllocationTimeout:
        reject()
    except AllocationError as e:
        return ("error", str(e))
    if not outcome.allocated:
        assert outcome.results == []
        return ("unschedulable",)
    assert len(outcome.results) == len(claims)
    return ("allocated", outcome.results, outcome.score)


def allocate(sc: Scenario, objects: Iterable[Obj] | None = None) -> tuple[ClusterState, tuple[Any, ...]]:
    """Load the scenario (or its objects in another order) and allocate its claims once."""
    state = load(sc.objects if objects is None else objects)
    allocator = Allocator(state, FeatureGates.only(sc.features))
    return state, answer(allocator, copy.deepcopy(sc.node), claims_of(state, sc.allocate))


def masked(value: Any) -> Any:
    """Results with share IDs reduced to their presence and quantities to their value."""
    if isinstance(value, Mapping):
        out = {}
        for k, v in value.items():
            if k == "shareID":
                out[k] = bool(v)
            elif k == "consumedCapacity" and isinstance(v, Mapping):
                out[k] = {n: Quantity.from_json(q).value for n, q in v.items()}
            else:
                out[k] = masked(v)
        return out
    if isinstance(value, (list, tuple)):
        return [masked(v) for v in value]
    return value


# --------------------------------------------------------------------------- the cluster as the oracle sees it


class Cluster:
    """What the invariants need from the objects: the devices and counter sets of the slices
    (by pool; a pool's generation is not the oracle's business: which slices the node sees
    decides it, and device names differ across generations in generated scenarios), and the
    devices the allocated claims hold."""

    def __init__(self, sc: Scenario) -> None:
        self.features = set(sc.features)
        self.consumable = "DRAConsumableCapacity" in self.features
        self.partitionable = "DRAPartitionableDevices" in self.features
        self.list_types = "DRAListTypeAttributes" in self.features
        self.devices: dict[DeviceId, Obj] = {}
        self.counters: dict[tuple[str, str, str, str], int] = {}  # (driver, pool, set, counter) -> value
        for s in (o for o in sc.objects if o["kind"] == "ResourceSlice"):
            spec = s["spec"]
            driver, pool = spec["driver"], spec["pool"]["name"]
            for d in spec.get("devices") or ():
                self.devices.setdefault((driver, pool, d["name"]), d)
            for cs in spec.get("sharedCounters") or ():
                for name, c in cs["counters"].items():
                    self.counters[(driver, pool, cs["name"], name)] = nanos(c["value"])
        #: results of the claims already allocated (in the state, not being allocated now)
        self.in_use: list[Obj] = []
        for o in sc.objects:
            if o["kind"] == "ResourceClaim" and o["metadata"]["name"] not in sc.allocate:
                allocation = (o.get("status") or {}).get("allocation")
                if allocation:
                    self.in_use += allocation["devices"]["results"]

    def device(self, r: Mapping[str, Any]) -> Obj:
        found = self.devices.get(device_id(r))
        assert found is not None, f"result names a device that no current slice has: {dict(r)}"
        return found

    def shareable(self, d: Mapping[str, Any]) -> bool:
        """Allocatable to several claims (upstream: allowMultipleAllocations, with the gate)."""
        return self.consumable and bool(d.get("allowMultipleAllocations"))


def nanos(q: Any) -> int:
    """A quantity in units of 1n, exactly."""
    value = Quantity.from_json(q).value
    return int(value * 10**9)


def device_id(r: Mapping[str, Any]) -> DeviceId:
    return (r["driver"], r["pool"], r["device"])


def results_of(allocation: Mapping[str, Any]) -> list[Obj]:
    return list((allocation.get("devices") or {}).get("results") or ())


def allocated_example(sc: Scenario) -> tuple[Cluster, list[Obj]]:
    """The scenario's allocation results (one AllocationResult per claim), none when the
    claims do not fit (the invariants then hold trivially; rejecting such examples instead
    would make hypothesis generate about three times as many)."""
    show(sc)
    _, got = allocate(sc)
    event(f"outcome: {got[0]}")  # pytest --hypothesis-show-statistics shows the mix
    return Cluster(sc), (got[1] if got[0] == "allocated" else [])


# --------------------------------------------------------------------------- 1. at most once per request


@examples(80)
@given(sc=clusters())
def test_a_device_appears_at_most_once_per_request(sc: Scenario) -> None:
    _, allocations = allocated_example(sc)
    check_once_per_request(sc, allocations)


def check_once_per_request(sc: Scenario, allocations: list[Obj]) -> None:
    """No (request, device) twice in a claim's results (upstream resumes its device loop
    after the device it picked, so a multi-allocatable device too is taken once per request)."""
    for name, allocation in zip(sc.allocate, allocations):
        per_request = Counter((r["request"], *device_id(r)) for r in results_of(allocation))
        twice = [k for k, n in per_request.items() if n > 1]
        assert not twice, f"claim {name}: request got the same device more than once: {twice}"


@examples(80)
@given(sc=clusters())
def test_a_device_that_cannot_be_shared_is_allocated_once(sc: Scenario) -> None:
    """An exclusive device (not multi-allocatable, or without DRAConsumableCapacity) is not in
    use by an allocated claim and goes to one request only; only admin access may reach a
    device in use, and never twice in one claim (upstream allocateDevice)."""
    cluster, allocations = allocated_example(sc)
    check_exclusive(cluster, sc, allocations)


def check_exclusive(cluster: Cluster, sc: Scenario, allocations: list[Obj]) -> None:
    """See :func:`test_a_device_that_cannot_be_shared_is_allocated_once`."""
    held = {device_id(r) for r in cluster.in_use
            if not r.get("adminAccess") and not (cluster.consumable and r.get("shareID"))}
    shared_in_use = {device_id(r) for r in cluster.in_use if not r.get("adminAccess") and r.get("shareID")}
    earlier: set[DeviceId] = set()  # devices that results of earlier claims got
    for name, allocation in zip(sc.allocate, allocations):
        mine: Counter[DeviceId] = Counter()
        for r in results_of(allocation):
            dev, did = cluster.device(r), device_id(r)
            if cluster.shareable(dev):
                if not r.get("adminAccess"):
                    assert did not in held, f"claim {name}: {did} shared although held exclusively by a claim"
                continue
            mine[did] += 1
            if r.get("adminAccess"):
                continue
            assert did not in held and did not in shared_in_use, f"claim {name}: {did} is in use"
            assert did not in earlier, f"claim {name}: {did} was already given to an earlier claim"
        twice = [d for d, n in mine.items() if n > 1]
        assert not twice, f"claim {name}: exclusive devices allocated more than once: {twice}"
        earlier |= set(mine)


@examples(80)
@given(sc=clusters())
def test_every_allocated_device_is_usable(sc: Scenario) -> None:
    """Each request gets its count of devices of its class (one subrequest of a prioritized
    list), flagged adminAccess exactly when asked; each device is reachable from the node,
    has its taints tolerated (DRADeviceTaints) and binding conditions only with
    DRADeviceBindingConditions and DRAResourceClaimDeviceStatus (upstream allocateDevice,
    isSelectable)."""
    cluster, allocations = allocated_example(sc)
    check_usable(cluster, sc, allocations)


def reaches_node(spec: Mapping[str, Any], dev: Mapping[str, Any]) -> bool:
    """Whether a device of a slice with ``spec`` is offered to ``node-1`` (region-1)."""
    where = dev if spec.get("perDeviceNodeSelection") else spec
    if where.get("allNodes") or where.get("nodeName") == NODE:
        return True
    terms = (where.get("nodeSelector") or {}).get("nodeSelectorTerms") or ()
    return any(all(e["key"] == "region" and "region-1" in e["values"] for e in t.get("matchExpressions") or ())
               for t in terms)


def tolerated(taint: Mapping[str, Any], tolerations: Iterable[Mapping[str, Any]]) -> bool:
    for t in tolerations:
        if t.get("effect") and t["effect"] != taint["effect"]:
            continue
        if not t.get("key") and t.get("operator") == "Exists":
            return True
        if t.get("key") != taint["key"]:
            continue
        if t.get("operator") == "Exists" or t.get("value") == taint.get("value"):
            return True
    return False


def check_usable(cluster: Cluster, sc: Scenario, allocations: list[Obj]) -> None:
    claims = {o["metadata"]["name"]: o for o in sc.objects if o["kind"] == "ResourceClaim"}
    slice_of = {(s["spec"]["driver"], s["spec"]["pool"]["name"], d["name"]): s["spec"]
                for s in sc.objects if s["kind"] == "ResourceSlice" for d in s["spec"].get("devices") or ()}
    binding = {"DRADeviceBindingConditions", "DRAResourceClaimDeviceStatus"} <= cluster.features
    for name, allocation in zip(sc.allocate, allocations):
        claim = claims[name]
        per_parent: dict[str, list[Obj]] = {}
        for r in results_of(allocation):
            per_parent.setdefault(r["request"].partition("/")[0], []).append(r)
            dev, did = cluster.device(r), device_id(r)
            body = request_body(claim, r["request"])
            assert bool(r.get("adminAccess")) == bool(body.get("adminAccess")), f"claim {name}: adminAccess of {r}"
            cls = body["deviceClassName"]
            assert cls == "class-any" or cls == "class-" + r["driver"][-1], f"claim {name}: {did} is not in {cls}"
            assert reaches_node(slice_of[did], dev), f"claim {name}: {did} is not offered to {NODE}"
            if "DRADeviceTaints" in cluster.features:
                for taint in dev.get("taints") or ():
                    if taint["effect"] in ("NoSchedule", "NoExecute"):
                        assert tolerated(taint, body.get("tolerations") or ()), f"claim {name}: {did} taint {taint}"
            if dev.get("bindingConditions"):
                assert binding, f"claim {name}: {did} has binding conditions, the gates are off"
        requests = claim["spec"]["devices"]["requests"]
        assert sorted(per_parent) == sorted(q["name"] for q in requests), f"claim {name}: results per request {per_parent}"
        for parent, results in per_parent.items():
            chosen = {r["request"] for r in results}
            assert len(chosen) == 1, f"claim {name}: request {parent} got devices of several subrequests: {chosen}"
            body = request_body(claim, results[0]["request"])
            if body.get("allocationMode", "ExactCount") == "ExactCount":
                assert len(results) == body.get("count", 1), f"claim {name}: {parent} asks {body.get('count', 1)}, got {results}"


# --------------------------------------------------------------------------- 2. counters and capacity


@examples(80)
@given(sc=clusters())
def test_no_counter_or_capacity_is_exceeded(sc: Scenario) -> None:
    cluster, allocations = allocated_example(sc)
    new = [r for a in allocations for r in results_of(a)]
    check_counters(cluster, new)
    check_capacity(cluster, sc, allocations)


def check_counters(cluster: Cluster, new: list[Obj]) -> None:
    """Every counter that a newly allocated device consumes still holds what the devices
    allocated in the pool (in use or new, each device once) consume (upstream
    checkAvailableCounters); without DRAPartitionableDevices no such device is allocated."""
    consuming = [r for r in new if cluster.device(r).get("consumesCounters")]
    if not cluster.partitionable:
        assert not consuming, f"devices that consume counters allocated without DRAPartitionableDevices: {consuming}"
        return
    allocated = {device_id(r) for r in cluster.in_use if not r.get("adminAccess")}
    added = {device_id(r) for r in new if not r.get("adminAccess")} - allocated
    everything = allocated | added
    used: Counter[tuple[str, str, str, str]] = Counter()
    touched: set[tuple[str, str, str, str]] = set()
    for did in sorted(everything):
        dev = cluster.devices.get(did)
        for cc in (dev or {}).get("consumesCounters") or ():
            for name, c in cc["counters"].items():
                key = (did[0], did[1], cc["counterSet"], name)
                used[key] += nanos(c["value"])
                if did in added:
                    touched.add(key)
    for key in sorted(touched):
        assert key in cluster.counters, f"allocated device consumes counter {key}, which does not exist"
        assert used[key] <= cluster.counters[key], (
            f"counter {key}: devices in use plus new ones consume {used[key] / 1e9:g}, "
            f"the pool has {cluster.counters[key] / 1e9:g} (devices: {sorted(everything)})")


def _capacity_name(name: str, driver: str) -> str:
    prefix = driver + "/"
    return name[len(prefix):] if name.startswith(prefix) else name


def check_capacity(cluster: Cluster, sc: Scenario, allocations: list[Obj]) -> None:
    """A request's capacity asks are met by the device, and a shared device's capacity holds
    its shares in use plus the new ones (upstream CmpRequestOverCapacity, allocateDevice)."""
    claims = {o["metadata"]["name"]: o for o in sc.objects if o["kind"] == "ResourceClaim"}
    shares: dict[tuple[DeviceId, str], int] = Counter()
    touched: set[tuple[DeviceId, str]] = set()
    if cluster.consumable:
        for r in cluster.in_use:
            if r.get("shareID") and not r.get("adminAccess"):
                for n, q in (r.get("consumedCapacity") or {}).items():
                    shares[(device_id(r), _capacity_name(n, r["driver"]))] += nanos(q)
    for name, allocation in zip(sc.allocate, allocations):
        for r in results_of(allocation):
            dev, did = cluster.device(r), device_id(r)
            capacity = {n: nanos(c["value"]) for n, c in (dev.get("capacity") or {}).items()}
            consumed = {_capacity_name(n, r["driver"]): nanos(q) for n, q in (r.get("consumedCapacity") or {}).items()}
            asked = request_body(claims[name], r["request"]).get("capacity", {}).get("requests") or {}
            for n, q in asked.items():
                n = _capacity_name(n, r["driver"])
                assert n in capacity, f"claim {name}: {did} lacks capacity {n} that {r['request']} asks for"
                assert nanos(q) <= capacity[n], f"claim {name}: {did} has {n} {capacity[n] / 1e9:g} < asked {q}"
                if cluster.shareable(dev):
                    assert consumed.get(n, 0) >= nanos(q), f"claim {name}: {did} consumes less {n} than asked: {r}"
            if not cluster.shareable(dev):
                assert not r.get("shareID") and not r.get("consumedCapacity"), f"claim {name}: a share of an exclusive device: {r}"
                continue
            assert r.get("shareID"), f"claim {name}: a multi-allocatable device without a share ID: {r}"
            if r.get("adminAccess"):
                continue
            for n, v in consumed.items():
                assert n in capacity, f"claim {name}: {did} consumes capacity {n} it does not have"
                shares[(did, n)] += v
                touched.add((did, n))
    for did, n in sorted(touched):
        limit = nanos(cluster.devices[did]["capacity"][n]["value"])
        assert shares[(did, n)] <= limit, (
            f"{did}: shares in use plus new ones consume {n} {shares[(did, n)] / 1e9:g}, capacity {limit / 1e9:g}")


def request_body(claim: Obj, name: str) -> Obj:
    """The ExactDeviceRequest (or subrequest) a result's ``request`` names."""
    parent, _, sub = name.partition("/")
    for req in claim["spec"]["devices"]["requests"]:
        if req["name"] != parent:
            continue
        if not sub:
            return req.get("exactly") or {}
        for s in req.get("firstAvailable") or ():
            if s["name"] == sub:
                return s
    raise AssertionError(f"result names request {name}, which claim {claim['metadata']['name']} does not have")


# --------------------------------------------------------------------------- 3. constraints


VALUE_FIELDS = {"string": "string", "strings": "string", "int": "int", "ints": "int", "bool": "bool",
                "bools": "bool", "version": "version", "versions": "version"}


def lookup(dev: Obj, driver: str, attribute: str) -> tuple[bool, frozenset[tuple[str, Any]]] | None:
    """(is a list, its elements tagged with their type) of a device's attribute given by its
    fully qualified name, or None when the device does not have it (upstream lookupAttribute)."""
    attrs = dev.get("attributes") or {}
    value = attrs.get(attribute)
    if value is None:
        domain, _, ident = attribute.partition("/")
        if domain == driver:
            value = attrs.get(ident)
    if value is None:
        return None
    ((field, raw),) = value.items()
    kind = VALUE_FIELDS[field]
    is_list = field in ("strings", "ints", "bools", "versions")
    elements = raw if is_list else [raw]
    return (is_list, frozenset((kind, v) for v in elements))


def in_scope(names: list[str], request: str) -> bool:
    """Whether a constraint limited to ``names`` covers a result of ``request`` (``req`` or ``req/sub``)."""
    if not names:
        return True
    parent = request.partition("/")[0]
    return parent in names or request in names


@examples(80)
@given(sc=clusters())
def test_every_constraint_holds_on_the_result(sc: Scenario) -> None:
    """Devices in a constraint's scope have the attribute; with two or more, matchAttribute
    needs one common value (scalars: the same type and value; with DRAListTypeAttributes a
    non-empty intersection of all devices' values) and distinctAttribute values that no two
    devices share (with DRAListTypeAttributes: pairwise disjoint)."""
    cluster, allocations = allocated_example(sc)
    check_constraints(cluster, sc, allocations)


def check_constraints(cluster: Cluster, sc: Scenario, allocations: list[Obj]) -> None:
    """See :func:`test_every_constraint_holds_on_the_result`."""
    claims = {o["metadata"]["name"]: o for o in sc.objects if o["kind"] == "ResourceClaim"}
    for name, allocation in zip(sc.allocate, allocations):
        for constraint in claims[name]["spec"]["devices"].get("constraints") or ():
            scope = [r for r in results_of(allocation) if in_scope(constraint.get("requests") or [], r["request"])]
            values = []
            for r in scope:
                kind = "matchAttribute" if "matchAttribute" in constraint else "distinctAttribute"
                value = lookup(cluster.device(r), r["driver"], constraint[kind])
                assert value is not None, f"claim {name}: {device_id(r)} lacks {constraint[kind]} of {kind}"
                values.append((device_id(r), value))
            if len(values) < 2:
                continue
            if "matchAttribute" in constraint:
                check_match(name, constraint, values, cluster.list_types)
            else:
                check_distinct(name, constraint, values, cluster.list_types)


def check_match(name: str, constraint: Obj, values: list[Any], list_types: bool) -> None:
    if list_types:
        common = frozenset.intersection(*(v for _, (_, v) in values))
        assert common, f"claim {name}: {constraint}: no value common to {values}"
        return
    assert not any(is_list for _, (is_list, _) in values), f"claim {name}: {constraint}: list values {values}"
    assert len({v for _, (_, v) in values}) == 1, f"claim {name}: {constraint}: values differ: {values}"


def check_distinct(name: str, constraint: Obj, values: list[Any], list_types: bool) -> None:
    if not list_types:
        # upstream accepts a list value on the first device only; scalars must not repeat
        assert sum(is_list for _, (is_list, _) in values[1:]) == 0, f"claim {name}: {constraint}: list values {values}"
        values = [(d, (is_list, v)) for d, (is_list, v) in values if not is_list]
    for i, (a, (_, va)) in enumerate(values):
        for b, (_, vb) in values[i + 1:]:
            assert not va & vb, f"claim {name}: {constraint}: {a} and {b} share {sorted(va & vb, key=repr)}"


# --------------------------------------------------------------------------- 4. load order


@examples(60)
@given(sc=clusters(), rnd=st.randoms(use_true_random=False))
def test_the_answer_does_not_depend_on_load_order(sc: Scenario, rnd: random.Random) -> None:
    """Shuffled objects (slices, classes, claims in use, the claims themselves) give the same
    answer: pools are searched by driver then pool name, slices by name, devices in slice
    order, whatever order they were loaded in."""
    show(sc)
    _, first = allocate(sc)
    shuffled = list(sc.objects)
    rnd.shuffle(shuffled)
    _, second = allocate(sc, shuffled)
    note(f"shuffled order: {[(o['kind'], o['metadata']['name']) for o in shuffled]}")
    assert masked(second) == masked(first)


# --------------------------------------------------------------------------- 5. preview and explain


def run_cli(args: list[str]) -> tuple[int, Obj]:
    result = CliRunner().invoke(cli, args, catch_exceptions=False)
    assert result.exit_code in (0, 1, 2), f"exit {result.exit_code}: {result.output[-2000:]}"
    return result.exit_code, json.loads(result.stdout)


def state_file(sc: Scenario, directory: Path) -> Path:
    return write_state(sc.as_document(), directory)


def cli_args(command: str, sc: Scenario, state: Path, timeout: float = SEARCH_SECONDS) -> list[str]:
    doc = sc.as_document()
    return [command, "--state", str(state), "--node", NODE, "-o", "json", "--timeout", f"{timeout:g}s",
            "--feature-gates", gates_flag(doc), *claim_targets(doc)]


def node_entry(doc: Obj) -> Obj:
    (entry,) = [n for n in doc["nodes"] if n["node"] == NODE]
    if entry.get("status") == "Error" and TIMED_OUT in str(entry.get("error") or entry.get("reason") or ""):
        reject()  # the search ran out of time on a loaded machine: no answer to compare
    return entry


@examples(30)
@given(sc=clusters())
def test_preview_and_explain_agree(sc: Scenario, tmp_path_factory: pytest.TempPathFactory) -> None:
    """Same status for the node (Allocated/Unschedulable/Error, and the library's answer),
    and explain shows exactly the devices preview allocates, per request."""
    show(sc)
    state = state_file(sc, tmp_path_factory.mktemp("state"))
    p_code, preview = run_cli(cli_args("preview", sc, state))
    e_code, explain = run_cli(cli_args("explain", sc, state))
    p_entry, e_entry = node_entry(preview), node_entry(explain)
    assert (p_code, p_entry["status"]) == (e_code, e_entry["status"]), f"preview {p_entry}\nexplain {e_entry}"
    _, library = allocate(sc)
    assert p_entry["status"] == {"allocated": "Allocated", "unschedulable": "Unschedulable", "error": "Error"}[library[0]]
    if p_entry["status"] != "Allocated":
        return
    allocated = Counter((r["request"], *device_id(r)) for a in p_entry["allocations"]
                        for r in results_of(a["allocation"]))
    shown = Counter((r["request"], d["driver"], d["pool"], d["device"])
                    for r in e_entry["requests"] for d in r["allocated"])
    assert shown == allocated, f"explain shows {shown}, preview allocates {allocated}"
    assert masked([a["allocation"] for a in p_entry["allocations"]]) == masked(library[1])


# --------------------------------------------------------------------------- 6. same input, same answer


@examples(40)
@given(sc=clusters(), other=clusters())
def test_same_answer_twice_in_one_process(sc: Scenario, other: Scenario) -> None:
    """One Allocator asked twice, a fresh one over a fresh copy of the objects, and a fresh
    one after another scenario ran: all give the same answer."""
    show(sc)
    state = load(sc.objects)
    allocator = Allocator(state, FeatureGates.only(sc.features))
    claims = claims_of(state, sc.allocate)
    first = answer(allocator, copy.deepcopy(sc.node), claims)
    again = answer(allocator, copy.deepcopy(sc.node), claims)
    assert masked(again) == masked(first), "the same Allocator answered differently the second time"
    allocate(other)
    _, fresh = allocate(sc)
    assert masked(fresh) == masked(first), "a fresh Allocator answered differently after another scenario ran"


def _process_env() -> dict[str, str]:
    env = {**os.environ, "KUBECONFIG": "/dev/null"}
    env.pop("KUBECTL_DRA_DEBUG", None)
    return env


@pytest.mark.slow
@examples(3)
@given(sc=clusters())
def test_same_answer_in_a_fresh_process(sc: Scenario, tmp_path_factory: pytest.TempPathFactory) -> None:
    """``preview -o json`` in a new interpreter answers as it does in this one (which has run
    many scenarios before)."""
    show(sc)
    state = state_file(sc, tmp_path_factory.mktemp("state"))
    # a generous limit: preview's reasons for an unschedulable node come from a second, traced
    # search under the same limit, so a search cut short on a loaded machine changes them
    args = cli_args("preview", sc, state, timeout=FRESH_PROCESS_SECONDS)
    here_code, here = run_cli(args)
    proc = subprocess.run([sys.executable, "-m", "kubectl_dra", *args], capture_output=True, text=True,
                          env=_process_env(), timeout=300)
    assert proc.returncode in (0, 1, 2) and "Traceback" not in proc.stderr, proc.stderr[-2000:]
    there_entry, here_entry = node_entry(json.loads(proc.stdout)), node_entry(here)
    assert proc.returncode == here_code, f"exit {proc.returncode} vs {here_code}: {proc.stderr[-2000:]}"
    assert masked(there_entry) == masked(here_entry)


# --------------------------------------------------------------------------- the oracle itself


def _hand_made() -> Scenario:
    """Two devices of one pool sharing a counter, one of them multi-allocatable, and a claim
    with a matchAttribute constraint: the checks above must reject broken answers on it."""
    slices = [
        {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "s1"},
         "spec": {"driver": "driver-a", "nodeName": NODE, "pool": {"name": "p", "generation": 1, "resourceSliceCount": 2},
                  "devices": [
                      {"name": "d1", "allowMultipleAllocations": True, "attributes": {"model": {"string": "a"}},
                       "capacity": {"bandwidth": {"value": "4Gi"}},
                       "consumesCounters": [{"counterSet": "cs", "counters": {"c": {"value": "2"}}}]},
                      {"name": "d2", "attributes": {"model": {"string": "b"}},
                       "consumesCounters": [{"counterSet": "cs", "counters": {"c": {"value": "1"}}}]}]}},
        {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "s2"},
         "spec": {"driver": "driver-a", "nodeName": NODE, "pool": {"name": "p", "generation": 1, "resourceSliceCount": 2},
                  "sharedCounters": [{"name": "cs", "counters": {"c": {"value": "2"}}}]}},
    ]
    claim = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": "c", "namespace": "default"},
             "spec": {"devices": {"requests": [{"name": "r", "exactly": {
                 "deviceClassName": "class-a", "allocationMode": "ExactCount", "count": 2,
                 "capacity": {"requests": {"bandwidth": "3Gi"}}}}],
                 "constraints": [{"matchAttribute": "driver-a/model"}]}}}
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": NODE, "labels": {}}}
    return Scenario(features=["DRAConsumableCapacity", "DRAPartitionableDevices"], node=node,
                    objects=[*slices, claim], allocate=["c"])


def _result(device: str, **extra: Any) -> Obj:
    return {"request": "r", "driver": "driver-a", "pool": "p", "device": device, **extra}


def _allocation(*results: Obj) -> Obj:
    return {"devices": {"results": list(results)}}


def test_the_checks_reject_broken_answers() -> None:
    """The invariants are not vacuous: each check fails on an answer that breaks its rule."""
    sc = _hand_made()
    cluster = Cluster(sc)
    share = {"shareID": "00000000-0000-0000-0000-000000000001", "consumedCapacity": {"bandwidth": "3Gi"}}
    with pytest.raises(AssertionError, match="more than once"):
        check_once_per_request(sc, [_allocation(_result("d1", **share), _result("d1", **share))])
    with pytest.raises(AssertionError, match="earlier claim"):
        two = Scenario(sc.features, sc.node, sc.objects, ["c", "c"])
        check_exclusive(cluster, two, [_allocation(_result("d2")), _allocation(_result("d2"))])
    with pytest.raises(AssertionError, match="counter"):
        check_counters(cluster, [_result("d1", **share), _result("d2")])
    with pytest.raises(AssertionError, match="capacity 4"):
        check_capacity(cluster, sc, [_allocation(_result("d1", **share), _result("d1", **share))])
    with pytest.raises(AssertionError, match="values differ"):
        check_constraints(cluster, sc, [_allocation(_result("d1", **share), _result("d2"))])
    # and accept a sound one
    check_once_per_request(sc, [_allocation(_result("d1", **share))])
    check_counters(cluster, [_result("d1", **share)])
    check_capacity(cluster, sc, [_allocation(_result("d1", **share))])
    check_constraints(cluster, sc, [_allocation(_result("d1", **share))])
