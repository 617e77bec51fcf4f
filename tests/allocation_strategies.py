"""Hypothesis strategies for random DRA clusters and claims (our own generator, for the
allocator's property tests in ``test_allocator_properties.py``).

A drawn :class:`Scenario` has the shape of the conformance scenarios
(``../shared/conformance/README.md``): feature gates, one node, the cluster objects
(DeviceClasses, ResourceSlices, allocated claims holding devices) and the claims to allocate
together. The cluster is small (a few pools of a few devices) so that every property runs
fast, but it mixes everything the allocator looks at: several drivers and pools,
generations and resourceSliceCount, node selection (per slice and per device), attributes of
every type (scalars and lists), capacity with request policies, allowMultipleAllocations,
shared counters with consumesCounters, taints, binding conditions, devices in use
(exclusive, admin access, shares with consumedCapacity); claims with ExactCount/All,
prioritized lists, CEL selectors over the attributes, matchAttribute/distinctAttribute,
admin access, capacity requests and tolerations. Fields of disabled gates are rare (they
make the allocation fail with an error or treat devices as unusable) but not absent.

Generation is kept cheap: one draw picks among prepared options (a strategy built per
draw is slow to validate), and the first option is the simplest, so shrinking goes there.
"""

from __future__ import annotations

import copy
import functools
import random
from dataclasses import dataclass
from typing import Any, Sequence

from hypothesis import strategies as st

Obj = dict[str, Any]
Draw = Any  # hypothesis' draw function

API = "resource.k8s.io/v1"
#: the DRA gates the allocator looks at (drawn on top of GA behaviour)
GATES = ("DRAAdminAccess", "DRAConsumableCapacity", "DRADeviceBindingConditions", "DRADeviceTaints",
         "DRAListTypeAttributes", "DRAPartitionableDevices", "DRAPrioritizedList", "DRAResourceClaimDeviceStatus")
DRIVERS = ("driver-a", "driver-b", "driver-c")
POOLS = ("pool-1", "pool-2", "pool-3")
NODE = "node-1"
NODE_LABELS = {"region": "region-1"}
#: attribute name -> API value field of its scalar form, of its list form
ATTRIBUTES = {"model": ("string", "strings"), "numa": ("int", "ints"), "healthy": ("bool", "bools"),
              "driverVersion": ("version", "versions")}
VALUES: dict[str, list[Any]] = {"string": ["a", "b", "c"], "int": [0, 1, 2], "bool": [True, False],
                                "version": ["1.0.0", "1.2.0", "2.0.0"]}
#: an attribute outside the drivers' domains (fully qualified in slices and constraints)
QUALIFIED = "example.com/color"
#: class-a/b/c select the devices of driver-a/b/c; class-any every device
CLASSES = ("class-a", "class-b", "class-c", "class-any")


# --------------------------------------------------------------------------- drawing helpers


@functools.cache
def _below(n: int) -> st.SearchStrategy[int]:
    """``integers(0, n - 1)``, built once."""
    return st.integers(0, n - 1)


def choose(draw: Draw, options: Sequence[Any]) -> Any:
    """One of ``options`` (shrinks towards the first)."""
    return options[draw(_below(len(options)))]


def one_in(draw: Draw, n: int) -> bool:
    """True about once in ``n`` draws (shrinks towards False)."""
    return draw(_below(n)) == n - 1


def between(draw: Draw, low: int, high: int) -> int:
    """An integer in [low, high] (shrinks towards low)."""
    return low + draw(_below(high - low + 1))


@dataclass
class Scenario:
    """One random allocation problem: gates, node, cluster objects, claims to allocate."""

    features: list[str]
    node: Obj
    objects: list[Obj]
    allocate: list[str]  # names of claims (namespace default) among ``objects``, in order

    def as_document(self) -> Obj:
        """The scenario in the conformance file format (without ``expect``)."""
        meta = self.node["metadata"]
        return {"name": "property-example", "features": list(self.features),
                "node": {"name": meta["name"], "labels": dict(meta["labels"])},
                "objects": copy.deepcopy(self.objects), "allocate": list(self.allocate)}


# --------------------------------------------------------------------------- devices


def _attribute_options(scalar: str, many: str) -> list[Obj | None]:
    """What one attribute of a device may be: absent, each scalar value, a few lists."""
    values = VALUES[scalar]
    lists = [values[:1], values[1:], [values[-1], values[0]]]
    return [None, None, *({scalar: v} for v in values), *({many: list(v)} for v in lists)]


def _attribute_profiles() -> list[Obj]:
    """A fixed list of attribute sets: none, each attribute alone in each of its forms, then
    48 mixed sets (every combination would be too many to pick from in one draw)."""
    options = {name: _attribute_options(*fields) for name, fields in ATTRIBUTES.items()}
    rng = random.Random(8)  # fixed: the list is part of the generator, not of an example
    profiles: list[Obj] = [{}]
    for name, values in options.items():
        profiles += [{name: dict(v)} for v in values if v is not None]
    for _ in range(48):
        picked = {name: rng.choice(values) for name, values in options.items()}
        profile = {name: dict(v) for name, v in picked.items() if v is not None}
        if rng.random() < 0.4:  # an attribute of another domain, by its fully qualified name
            profile[QUALIFIED] = {"string": rng.choice(VALUES["string"])}
        profiles.append(profile)
    return profiles


ATTRIBUTE_PROFILES = _attribute_profiles()
BANDWIDTH_POLICIES: list[Obj | None] = [
    None,
    {"default": "1Gi", "validRange": {"min": "1Gi", "step": "1Gi"}},
    {"default": "2Gi", "validValues": ["2Gi", "4Gi"]},
    {"default": "1Gi", "validRange": {"min": "1Gi", "max": "4Gi"}},
]
#: a device's plain capacity
PLAIN_CAPACITY: list[Obj] = [{}, {}, {"memory": {"value": "1Gi"}}, {"memory": {"value": "2Gi"}},
                             {"memory": {"value": "4Gi"}}, {"memory": {"value": "8Gi"}, "cores": {"value": "4"}},
                             {"cores": {"value": "2"}}, {"memory": {"value": "2Gi"}, "bandwidth": {"value": "4Gi"}}]
#: taints and binding conditions (most devices have neither)
EXTRAS: list[Obj] = [{}] * 15 + [
    {"taints": [{"key": "k1", "value": "v1", "effect": "NoSchedule"}]},
    {"taints": [{"key": "k2", "value": "v1", "effect": "NoExecute"}]},
    {"taints": [{"key": "k1", "value": "v1", "effect": "None"}]},
    {"bindingConditions": ["ready"], "bindingFailureConditions": ["failed"]},
    {"bindingConditions": ["ready"], "bindingFailureConditions": ["failed"], "bindsToNode": True},
]


def _region_selector(region: str) -> Obj:
    return {"nodeSelectorTerms": [{"matchExpressions": [{"key": "region", "operator": "In", "values": [region]}]}]}


#: how one device of a slice with perDeviceNodeSelection reaches nodes
PER_DEVICE_NODES: list[Obj] = [{"nodeName": NODE}, {"nodeName": "node-2"}, {"allNodes": True},
                               {"nodeSelector": _region_selector("region-1")},
                               {"nodeSelector": _region_selector("region-2")}]
#: how a device slice reaches nodes (mostly: this node)
SLICE_NODES: list[Obj] = [{"nodeName": NODE}] * 6 + [
    {"allNodes": True}, {"nodeSelector": _region_selector("region-1")}, {"nodeName": "node-2"},
    {"nodeSelector": _region_selector("region-2")}, {"perDeviceNodeSelection": True}]


def draw_device(draw: Draw, name: str, counter_sets: list[str], per_device_node: bool) -> Obj:
    """One device of a slice."""
    dev: Obj = {"name": name}
    attrs = choose(draw, ATTRIBUTE_PROFILES)
    if attrs:
        dev["attributes"] = copy.deepcopy(attrs)
    capacity: Obj = copy.deepcopy(choose(draw, PLAIN_CAPACITY))
    if one_in(draw, 4):
        dev["allowMultipleAllocations"] = True
        bandwidth: Obj = {"value": choose(draw, ("10Gi", "4Gi"))}
        policy = choose(draw, BANDWIDTH_POLICIES)
        if policy:
            bandwidth["requestPolicy"] = copy.deepcopy(policy)
        capacity["bandwidth"] = bandwidth
    if capacity:
        dev["capacity"] = capacity
    if counter_sets:
        uses = choose(draw, [None, *((cs, v) for cs in counter_sets for v in ("1", "2"))])
        if uses:
            dev["consumesCounters"] = [{"counterSet": uses[0], "counters": {"c": {"value": uses[1]}}}]
    dev.update(copy.deepcopy(choose(draw, EXTRAS)))
    if per_device_node:
        dev.update(copy.deepcopy(choose(draw, PER_DEVICE_NODES)))
    return dev


def _slice(name: str, driver: str, pool: str, generation: int, count: int, spec: Obj) -> Obj:
    return {"apiVersion": API, "kind": "ResourceSlice", "metadata": {"name": name},
            "spec": {"driver": driver, "pool": {"name": pool, "generation": generation, "resourceSliceCount": count},
                     **spec}}


class _Names:
    """Serial names for slices (per scenario) and devices (per pool: pools of different
    drivers or names have devices of the same names, as real drivers do)."""

    def __init__(self) -> None:
        self.slices = 0
        self.devices = 0

    def slice(self) -> str:
        self.slices += 1
        return f"slice-{self.slices}"

    def device(self) -> str:
        self.devices += 1
        return f"device-{self.devices}"


def draw_pool(draw: Draw, driver: str, pool: str, names: _Names, features: list[str], first: bool,
              most_devices: int = 5) -> list[Obj]:
    """The slices of one pool: its current generation (sometimes incomplete), sometimes an
    older generation being replaced, sometimes a slice of shared counters. The ``first``
    pool's first slice is on the node (so that most scenarios have devices to allocate)."""
    partitionable = "DRAPartitionableDevices" in features
    generation = between(draw, 1, 2)
    with_counters = one_in(draw, 2 if partitionable else 12)
    counter_sets = (["cs-1", "cs-2"] if one_in(draw, 2) else ["cs-1"]) if with_counters else []
    n_device_slices = between(draw, 1, 2)
    declared = n_device_slices + (1 if with_counters else 0) + (1 if one_in(draw, 15) else 0)
    slices: list[Obj] = []
    in_pool: list[str] = []
    names.devices = 0
    duplicate = one_in(draw, 50)  # a device name used twice: the pool is invalid
    for _ in range(n_device_slices):
        selection = choose(draw, SLICE_NODES if partitionable else SLICE_NODES[:-1])
        if first and not slices:
            selection = {"nodeName": NODE}
        per_device = bool(selection.get("perDeviceNodeSelection"))
        devices = []
        for _ in range(between(draw, 1, most_devices)):
            name = in_pool[-1] if in_pool and duplicate else names.device()
            duplicate = duplicate and not in_pool
            in_pool.append(name)
            devices.append(draw_device(draw, name, counter_sets, per_device))
        slices.append(_slice(names.slice(), driver, pool, generation, declared, {**selection, "devices": devices}))
    if with_counters:
        sets = [{"name": cs, "counters": {"c": {"value": str(between(draw, 1, 4))}}} for cs in counter_sets]
        slices.append(_slice(names.slice(), driver, pool, generation, declared, {"nodeName": NODE, "sharedCounters": sets}))
    if generation == 2 and one_in(draw, 2):
        # an older generation the driver is replacing: never allocated from
        slices.append(_slice(names.slice(), driver, pool, 1, 1, {"nodeName": NODE, "devices": [
            {"name": f"old-{names.device()}", "attributes": {"model": {"string": "a"}}}]}))
    return slices


def device_classes() -> list[Obj]:
    """One class per driver (driver-c's with a class config) and class-any for every device."""
    out = []
    for cls, driver in zip(CLASSES, DRIVERS):
        spec: Obj = {"selectors": [{"cel": {"expression": f'device.driver == "{driver}"'}}]}
        if driver == "driver-c":
            spec["config"] = [{"opaque": {"driver": driver, "parameters": {"kind": "class"}}}]
        out.append({"apiVersion": API, "kind": "DeviceClass", "metadata": {"name": cls}, "spec": spec})
    out.append({"apiVersion": API, "kind": "DeviceClass", "metadata": {"name": "class-any"}, "spec": {}})
    return out


# --------------------------------------------------------------------------- claims


def _selectors(driver: str) -> list[str]:
    a = f'device.attributes["{driver}"]'
    c = f'device.capacity["{driver}"]'
    return [
        f'device.driver == "{driver}"',
        f'has({a}.model) && {a}.model in ["a", "b"]',
        f'has({a}.model) && {a}.model == "c"',
        f'has({a}.numa) && {a}.numa >= 1',
        f'!has({a}.healthy) || {a}.healthy == true',
        f'has({a}.driverVersion) && {a}.driverVersion.isGreaterThan(semver("1.1.0"))',
        "device.allowMultipleAllocations == true",
        f'has({c}.memory) && {c}.memory.compareTo(quantity("2Gi")) >= 0',
        f"{a}.numa == 1",  # a runtime error on a device without the attribute
        f"has({a}.numa) && {a}.numa.includes(1)",  # list attributes only
    ]


SELECTORS = {driver: _selectors(driver) for driver in DRIVERS}
TOLERATIONS: list[Obj] = [{"operator": "Exists"}, {"key": "k1", "operator": "Equal", "value": "v1"},
                          {"key": "k2", "operator": "Exists", "effect": "NoSchedule"}]
CAPACITY_REQUESTS: list[Obj] = [{"bandwidth": "1Gi"}, {"bandwidth": "2Gi"}, {"bandwidth": "3Gi"},
                                {"bandwidth": "5Gi"}, {"memory": "1Gi"}, {"memory": "4Gi"},
                                {"bandwidth": "2Gi", "memory": "1Gi"}]


def draw_exact(draw: Draw, features: list[str], driver: str) -> Obj:
    """The fields of an ExactDeviceRequest (or of a subrequest), mostly for ``driver``."""
    cls = CLASSES[DRIVERS.index(driver)]
    body: Obj = {"deviceClassName": choose(draw, (cls, cls, cls, cls, "class-any", *CLASSES))}
    if one_in(draw, 8):
        body["allocationMode"] = "All"
    else:
        body["allocationMode"] = "ExactCount"
        body["count"] = choose(draw, (1, 1, 1, 1, 2, 2, 3))
    if one_in(draw, 4):
        body["selectors"] = [{"cel": {"expression": choose(draw, SELECTORS[choose(draw, (driver, *DRIVERS))])}}
                             for _ in range(between(draw, 1, 2))]
    if one_in(draw, 7 if "DRAAdminAccess" in features else 150):
        body["adminAccess"] = True
    if one_in(draw, 3 if "DRAConsumableCapacity" in features else 150):
        body["capacity"] = {"requests": dict(choose(draw, CAPACITY_REQUESTS))}
    if one_in(draw, 4):
        body["tolerations"] = [dict(choose(draw, TOLERATIONS))]
    return body


def draw_claim(draw: Draw, name: str, features: list[str], drivers: list[str]) -> Obj:
    """A claim to allocate: 1-3 requests (exact or prioritized lists), constraints, config;
    mostly about the devices of one driver (so that constraints on its attributes can hold)."""
    driver = choose(draw, drivers)
    requests = []
    names = []
    for i in range(choose(draw, (1, 1, 2, 2, 3))):
        rname = f"req-{i}"
        names.append(rname)
        if one_in(draw, 3 if "DRAPrioritizedList" in features else 150):
            subs = [{"name": f"sub-{j}", **draw_exact(draw, features, driver)} for j in range(between(draw, 1, 3))]
            requests.append({"name": rname, "firstAvailable": subs})
            names += [f"{rname}/{s['name']}" for s in subs]
        else:
            requests.append({"name": rname, "exactly": draw_exact(draw, features, driver)})
    devices: Obj = {"requests": requests}
    constraints = []
    for _ in range(choose(draw, (0, 0, 0, 1, 1, 2))):
        kind = choose(draw, ("matchAttribute", "distinctAttribute"))
        domain = choose(draw, (driver, driver, driver, *DRIVERS))
        entry: Obj = {kind: QUALIFIED if one_in(draw, 6) else f"{domain}/{choose(draw, sorted(ATTRIBUTES))}"}
        if one_in(draw, 2):
            scope = [choose(draw, names) for _ in range(between(draw, 1, 2))]
            entry["requests"] = list(dict.fromkeys(scope))
        constraints.append(entry)
    if constraints:
        devices["constraints"] = constraints
    if one_in(draw, 5):
        devices["config"] = [{"opaque": {"driver": choose(draw, drivers), "parameters": {"claim": name}}}]
    return {"apiVersion": API, "kind": "ResourceClaim", "metadata": {"name": name, "namespace": "default"},
            "spec": {"devices": devices}}


def _this_node() -> Obj:
    return {"nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": [NODE]}]}]}


def draw_share_id(draw: Draw) -> str:
    """A share ID (a UUID; its value does not matter)."""
    h = f"{draw(_below(2**64)):032x}"
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:32]}"


def draw_allocated_claims(draw: Draw, devices: list[tuple[str, str, Obj]]) -> list[Obj]:
    """Claims already allocated (devices in use): exclusive results, admin access, shares
    with consumed capacity. Not necessarily consistent (a stored state need not be)."""
    out = []
    for i in range(choose(draw, (0, 0, 1, 1, 2)) if devices else 0):
        results = []
        seen: set[tuple[str, str, str]] = set()
        for _ in range(between(draw, 1, 3)):
            driver, pool, dev = choose(draw, devices)
            key = (driver, pool, dev["name"])
            if key in seen:
                continue
            seen.add(key)
            result: Obj = {"request": "req-0", "driver": driver, "pool": pool, "device": dev["name"]}
            if dev.get("allowMultipleAllocations") and not one_in(draw, 4):
                result["shareID"] = draw_share_id(draw)
                if "bandwidth" in (dev.get("capacity") or {}):
                    result["consumedCapacity"] = {"bandwidth": choose(draw, ("1Gi", "2Gi", "4Gi"))}
            elif one_in(draw, 6):
                result["adminAccess"] = True
            results.append(result)
        exact: Obj = {"deviceClassName": "class-any", "allocationMode": "ExactCount", "count": len(results)}
        if any(r.get("adminAccess") for r in results):
            exact["adminAccess"] = True
        out.append({"apiVersion": API, "kind": "ResourceClaim",
                    "metadata": {"name": f"in-use-{i}", "namespace": "default"},
                    "spec": {"devices": {"requests": [{"name": "req-0", "exactly": exact}]}},
                    "status": {"allocation": {"devices": {"results": results}, "nodeSelector": _this_node()}}})
    return out


@st.composite
def scenarios(draw: Draw, large: bool = False) -> Scenario:
    """A random cluster, gates, and the claims to allocate together on ``node-1``; ``large``:
    up to 6 pools of up to 12 devices per slice and 5 claims (for longer runs)."""
    features = [g for g in GATES if one_in(draw, 2)]
    pool_ids: list[tuple[str, str]] = []
    for _ in range(between(draw, 1, 6 if large else 3)):
        pool_id = (choose(draw, DRIVERS), choose(draw, POOLS))
        if pool_id not in pool_ids:
            pool_ids.append(pool_id)
    names = _Names()
    slices: list[Obj] = []
    for i, (driver, pool) in enumerate(pool_ids):
        slices += draw_pool(draw, driver, pool, names, features, i == 0, 12 if large else 5)
    # a slice's name says nothing of its pool or generation: rename them at random
    renamed = [s["metadata"]["name"] for s in slices]
    random.Random(draw(_below(2**32))).shuffle(renamed)
    for s, name in zip(slices, renamed):
        s["metadata"]["name"] = name
    devices = [(s["spec"]["driver"], s["spec"]["pool"]["name"], d) for s in slices for d in s["spec"].get("devices") or ()]
    in_use = draw_allocated_claims(draw, devices)
    drivers = sorted({d for d, _ in pool_ids})
    to_allocate = [draw_claim(draw, f"claim-{i}", features, drivers) for i in range(choose(draw, (1, 1, 1, 2, 2, 3, *((4, 5) if large else ()))))]
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": NODE, "labels": dict(NODE_LABELS)}}
    return Scenario(features=features, node=node, objects=[*device_classes(), *slices, *in_use, *to_allocate],
                    allocate=[c["metadata"]["name"] for c in to_allocate])
