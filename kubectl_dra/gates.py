"""DRA feature gates as kube-apiserver and kube-scheduler know them, per Kubernetes release.

The table below records upstream's *versioned* feature specs (``kube_features.go`` at 1.37,
``{Version, Default, PreRelease, LockToDefault, MinCompatibilityVersion}``). The state of a
gate in release X is the last spec whose version is <= X, skipping specs whose minimum
compatibility version is above X-1 (the default ``--min-compatibility-version``), exactly as
``featureSpecAtEmulationAndMinCompatVersion`` picks it. A gate not introduced yet in X is
``PRE-ALPHA`` there.

Parsing of ``--feature-gates`` follows ``featuregate.Set``/``SetFromMap`` (``AllAlpha`` and
``AllBeta`` first, then explicit gates; unknown gate, missing value and bad bool are errors;
gates not yet introduced in the chosen release cannot be set), with one deliberate
difference: a gate locked to its default upstream may still be switched off here, because
this tool keeps every behaviour toggleable ("would this work without X?").
"""

from __future__ import annotations

import difflib
import functools
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from enum import StrEnum
from types import MappingProxyType
from typing import Protocol, TypeVar

from .errors import FeatureGateError

__all__ = [
    "ALL_ALPHA",
    "ALL_BETA",
    "ALPHA",
    "BETA",
    "DEPENDENCIES",
    "DRA_GATES",
    "FeatureGates",
    "GA",
    "LATEST",
    "PRE_ALPHA",
    "RELEASES",
    "Spec",
    "gate_table",
    "Gate",
    "GateReader",
    "known_gate",
]

ALPHA = "ALPHA"
BETA = "BETA"
GA = "GA"
PRE_ALPHA = "PRE-ALPHA"  # not introduced yet in that release (upstream's PreAlpha)

ALL_ALPHA = "AllAlpha"
ALL_BETA = "AllBeta"

RELEASES: tuple[str, ...] = ("1.34", "1.35", "1.36", "1.37")
LATEST = "1.37"

class Gate(StrEnum):
    """The DRA feature gates by name: code names a gate through these, never a string literal
    (a typo is then an AttributeError at import, not a gate silently read as off)."""

    DYNAMIC_RESOURCE_ALLOCATION = "DynamicResourceAllocation"
    ADMIN_ACCESS = "DRAAdminAccess"
    CONSUMABLE_CAPACITY = "DRAConsumableCapacity"
    DERIVED_ATTRIBUTES = "DRADerivedAttributes"
    DEVICE_BINDING_CONDITIONS = "DRADeviceBindingConditions"
    DEVICE_COMPATIBILITY_GROUPS = "DRADeviceCompatibilityGroups"
    DEVICE_TAINT_RULES = "DRADeviceTaintRules"
    DEVICE_TAINTS = "DRADeviceTaints"
    EXTENDED_RESOURCE = "DRAExtendedResource"
    FRACTIONAL_CAPACITY_RANGE = "DRAFractionalCapacityRange"
    LIST_TYPE_ATTRIBUTES = "DRAListTypeAttributes"
    NODE_ALLOCATABLE_RESOURCES = "DRANodeAllocatableResources"
    OPTIONAL_NODE_OPERATIONS = "DRAOptionalNodeOperations"
    PARTITIONABLE_DEVICES = "DRAPartitionableDevices"
    PARTITIONABLE_DEVICES_TYPE = "DRAPartitionableDevicesType"
    PRIORITIZED_LIST = "DRAPrioritizedList"
    RESOURCE_CLAIM_DEVICE_STATUS = "DRAResourceClaimDeviceStatus"
    RESOURCE_CLAIM_GRANULAR_STATUS_AUTHORIZATION = "DRAResourceClaimGranularStatusAuthorization"
    RESOURCE_POOL_STATUS = "DRAResourcePoolStatus"
    SCHEDULER_FILTER_TIMEOUT = "DRASchedulerFilterTimeout"
    WORKLOAD_RESOURCE_CLAIMS = "DRAWorkloadResourceClaims"


class GateReader(Protocol):
    """Anything that says whether a gate is on: :class:`FeatureGates`, or a test's stand-in."""

    def enabled(self, name: str) -> bool: ...


#: the base feature; the conformance "features" model always has it on
BASE_GATE = Gate.DYNAMIC_RESOURCE_ALLOCATION


@dataclass(frozen=True)
class Spec:
    """One versioned spec: from ``version`` on the gate is ``stage`` with ``default``."""

    version: tuple[int, int]
    default: bool
    stage: str
    locked: bool = False
    min_compat: tuple[int, int] | None = None


def _s(version: str, default: bool, stage: str, locked: bool = False, min_compat: str | None = None) -> Spec:
    """Shorthand for the table."""
    return Spec(_minor(version), default, stage, locked, _minor(min_compat) if min_compat else None)


def _minor(version: str) -> tuple[int, int]:
    major, minor = version.split(".")
    return int(major), int(minor)


# Source: kubernetes/kubernetes feature specs at 1.37 (HEAD), cross-checked with the KEPs'
# kep.yaml milestones (e.g. KEP-5075 consumable capacity: alpha 1.34, beta 1.36).
_SPECS: dict[str, tuple[Spec, ...]] = {  # keyed by Gate, which is a str: plain names find them too
    Gate.ADMIN_ACCESS: (
        _s("1.32", False, ALPHA), _s("1.34", True, BETA), _s("1.36", True, GA, locked=True),
    ),
    Gate.CONSUMABLE_CAPACITY: (_s("1.34", False, ALPHA), _s("1.36", True, BETA)),
    Gate.DERIVED_ATTRIBUTES: (_s("1.37", False, ALPHA),),
    Gate.DEVICE_BINDING_CONDITIONS: (_s("1.34", False, ALPHA), _s("1.36", True, BETA)),
    Gate.DEVICE_COMPATIBILITY_GROUPS: (_s("1.37", False, ALPHA),),
    # beta in 1.36 stays off by default: it depends on an off-by-default beta API
    Gate.DEVICE_TAINT_RULES: (_s("1.35", False, ALPHA), _s("1.36", False, BETA), _s("1.37", True, GA)),
    Gate.DEVICE_TAINTS: (_s("1.33", False, ALPHA), _s("1.36", True, BETA), _s("1.37", True, GA)),
    Gate.EXTENDED_RESOURCE: (
        _s("1.34", False, ALPHA), _s("1.36", True, BETA), _s("1.37", True, GA, locked=True),
    ),
    # introduced as beta in 1.37, on by default only with --min-compatibility-version >= 1.37
    Gate.FRACTIONAL_CAPACITY_RANGE: (
        _s("1.37", False, BETA), _s("1.37", True, BETA, min_compat="1.37"),
    ),
    Gate.LIST_TYPE_ATTRIBUTES: (_s("1.36", False, ALPHA),),
    Gate.NODE_ALLOCATABLE_RESOURCES: (_s("1.36", False, ALPHA),),
    Gate.OPTIONAL_NODE_OPERATIONS: (_s("1.37", False, ALPHA),),
    Gate.PARTITIONABLE_DEVICES: (_s("1.33", False, ALPHA), _s("1.36", True, BETA)),
    Gate.PRIORITIZED_LIST: (
        _s("1.33", False, ALPHA), _s("1.34", True, BETA), _s("1.36", True, GA),
        _s("1.37", True, GA, locked=True),
    ),
    Gate.RESOURCE_CLAIM_DEVICE_STATUS: (
        _s("1.32", False, ALPHA), _s("1.33", True, BETA), _s("1.37", True, GA, locked=True),
    ),
    # kube-apiserver authorization of status updates; from the Kubernetes 1.36 feature-gate
    # reference (beta, on). Not confirmed against 1.37 source: assumed unchanged.
    Gate.RESOURCE_CLAIM_GRANULAR_STATUS_AUTHORIZATION: (_s("1.36", True, BETA),),
    # KEP-5677 (ResourcePoolStatusRequest): alpha in 1.36 and still alpha in 1.37 (kep.yaml:
    # alpha v1.36, beta planned v1.39; the 1.37 work is a second alpha), off by default. Its
    # companion DRAPartitionableDevicesType (ResourceSlice spec.partitionTypeAttribute) is
    # alpha from 1.37. From the kubernetes/website feature-gate pages and the KEP; the
    # versioned specs were not readable here.
    Gate.RESOURCE_POOL_STATUS: (_s("1.36", False, ALPHA),),
    Gate.PARTITIONABLE_DEVICES_TYPE: (_s("1.37", False, ALPHA),),
    Gate.SCHEDULER_FILTER_TIMEOUT: (_s("1.34", True, BETA),),
    Gate.WORKLOAD_RESOURCE_CLAIMS: (_s("1.36", False, ALPHA), _s("1.37", False, BETA)),
    Gate.DYNAMIC_RESOURCE_ALLOCATION: (
        _s("1.26", False, ALPHA), _s("1.32", False, BETA), _s("1.34", True, GA),
        _s("1.35", True, GA, locked=True),
    ),
}

#: every gate's name as a plain string, sorted (what JSON, YAML and flags show)
DRA_GATES: tuple[str, ...] = tuple(sorted(str(gate) for gate in _SPECS))
assert set(_SPECS) == set(Gate), "every Gate member has its row in the table, and no other"

#: upstream's declared dependencies (a gate needs these enabled); HEAD entries for gates added
#: after 1.35 follow the requirements stated in their feature descriptions
DEPENDENCIES: Mapping[Gate, tuple[Gate, ...]] = MappingProxyType({
    Gate.ADMIN_ACCESS: (BASE_GATE,),
    Gate.CONSUMABLE_CAPACITY: (BASE_GATE,),
    Gate.DEVICE_BINDING_CONDITIONS: (BASE_GATE, Gate.RESOURCE_CLAIM_DEVICE_STATUS),
    Gate.DEVICE_COMPATIBILITY_GROUPS: (Gate.PARTITIONABLE_DEVICES,),
    Gate.DEVICE_TAINT_RULES: (Gate.DEVICE_TAINTS,),
    Gate.DEVICE_TAINTS: (BASE_GATE,),
    Gate.EXTENDED_RESOURCE: (BASE_GATE,),
    Gate.PARTITIONABLE_DEVICES: (BASE_GATE,),
    Gate.PARTITIONABLE_DEVICES_TYPE: (Gate.PARTITIONABLE_DEVICES, Gate.RESOURCE_POOL_STATUS),
    Gate.PRIORITIZED_LIST: (BASE_GATE,),
    Gate.RESOURCE_POOL_STATUS: (BASE_GATE,),
    Gate.SCHEDULER_FILTER_TIMEOUT: (BASE_GATE,),
})

_VERSION_RE = re.compile(r"^v?(\d+)\.(\d+)(?:\.(\d+))?\Z")
_GO_TRUE = frozenset({"1", "t", "T", "TRUE", "true", "True"})
_GO_FALSE = frozenset({"0", "f", "F", "FALSE", "false", "False"})


def _spec_at(name: str, release: tuple[int, int]) -> Spec:
    """The spec in effect in ``release`` (minimum compatibility version = release - 1)."""
    min_compat = (release[0], release[1] - 1)
    for spec in reversed(_SPECS[name]):
        if spec.version > release:
            continue
        if spec.min_compat is not None and min_compat < spec.min_compat:
            continue
        return spec
    return Spec((0, 0), False, PRE_ALPHA)


def _parse_release(version: str) -> str:
    """``1.35``, ``v1.35`` or ``1.35.2`` -> ``1.35``; anything else, or an unknown release, fails."""
    if not isinstance(version, str):
        raise FeatureGateError(f"invalid Kubernetes version {version!r}: expected e.g. 1.35")
    match = _VERSION_RE.match(version.strip())
    if not match:
        raise FeatureGateError(f"invalid Kubernetes version {version!r}: expected e.g. 1.35, v1.35 or 1.35.2")
    release = f"{int(match.group(1))}.{int(match.group(2))}"
    if release not in RELEASES:
        raise FeatureGateError(
            f"unsupported Kubernetes version {version!r}: supported releases are {', '.join(RELEASES)}"
        )
    return release


def _go_parse_bool(text: str) -> bool | None:
    """Go's ``strconv.ParseBool``; ``None`` for anything it rejects."""
    if text in _GO_TRUE:
        return True
    if text in _GO_FALSE:
        return False
    return None


def _unknown_gate(name: str) -> FeatureGateError:
    """Upstream's message, plus the closest known gate when there is one."""
    message = f"unrecognized feature gate: {name}"
    close = difflib.get_close_matches(name, DRA_GATES + (ALL_ALPHA, ALL_BETA), n=1, cutoff=0.75)
    if close:
        message += f" (did you mean {close[0]}?)"
    return FeatureGateError(message)


def known_gate(name: str) -> Gate:
    """The :class:`Gate` called ``name``; any other name is a :class:`FeatureGateError`.

    Every reader of gates checks names through this (FeatureGates' queries, validation's
    ``gate_enabled``), so a name outside the table is refused the same way everywhere, never
    read as on or off: code names gates by ``Gate`` member, but names also come from people
    (``--feature-gates``) and files (conformance scenarios' ``features``)."""
    try:
        return Gate(name)
    except ValueError:
        raise _unknown_gate(str(name)) from None


def _parse_flag(spec: str) -> dict[str, bool]:
    """``A=true,B=false`` as upstream's ``featureGate.Set`` reads it."""
    result: dict[str, bool] = {}
    for item in spec.split(","):
        if not item:
            continue
        key, sep, raw = item.partition("=")
        key = key.strip()
        if not sep:
            raise FeatureGateError(f"missing bool value for {key}")
        raw = raw.strip()
        value = _go_parse_bool(raw)
        if value is None:
            raise FeatureGateError(
                f'invalid value of {key}={raw}, err: strconv.ParseBool: parsing "{raw}": invalid syntax'
            )
        result[key] = value
    return result


class FeatureGates(Mapping[str, bool]):
    """An immutable mapping DRA gate -> enabled, for one Kubernetes release."""

    __slots__ = ("_release", "_values", "_explicit", "_hash")

    def __init__(self, release: str, values: Mapping[str, bool], explicit: Iterable[str] = ()) -> None:
        """Use the class methods; ``values`` must name every gate in :data:`DRA_GATES`."""
        self._release = release
        self._values: Mapping[str, bool] = MappingProxyType({name: bool(values[name]) for name in DRA_GATES})
        self._explicit = frozenset(explicit)
        self._hash: int | None = None

    # -- construction -------------------------------------------------------------------

    @classmethod
    def default(cls) -> "FeatureGates":
        """The defaults of the newest release (:data:`LATEST`)."""
        return cls.for_version(LATEST)

    @classmethod
    def for_version(cls, version: str) -> "FeatureGates":
        """The defaults of a release: ``1.34``..``1.37`` (also ``v1.35``, ``1.35.2``)."""
        release = _parse_release(version)
        at = _minor(release)
        return cls(release, {name: _spec_at(name, at).default for name in DRA_GATES})

    @classmethod
    def only(cls, enabled: Iterable[str]) -> "FeatureGates":
        """Every optional DRA gate off except ``enabled`` (the conformance "features" model,
        like upstream's allocator ``Features`` struct); the base gate
        ``DynamicResourceAllocation`` stays on because that model presupposes it."""
        names = [enabled] if isinstance(enabled, str) else list(enabled)
        on = {known_gate(name) for name in names} | {BASE_GATE}
        return cls(LATEST, {name: name in on for name in DRA_GATES})

    def with_overrides(self, spec: str | Mapping[str, bool]) -> "FeatureGates":
        """Apply ``--feature-gates`` (``"A=true,B=false"`` or a mapping): ``AllAlpha``/``AllBeta``
        first for gates not set explicitly, then the explicit gates. Locked gates may be
        switched off too (deliberately unlike upstream)."""
        if isinstance(spec, str):
            requested = _parse_flag(spec)
        elif isinstance(spec, Mapping):
            requested = {}
            for key, value in spec.items():
                if not isinstance(value, bool):
                    raise FeatureGateError(f"invalid value of {key}={value!r}: must be true or false")
                requested[str(key)] = value
        else:
            raise FeatureGateError(f"feature gates must be a string like A=true,B=false, not {type(spec).__name__}")

        at = _minor(self._release)
        for key in requested:
            if key in (ALL_ALPHA, ALL_BETA):
                continue
            if _spec_at(known_gate(key), at).stage == PRE_ALPHA:
                first = ".".join(str(p) for p in _SPECS[key][0].version)
                raise FeatureGateError(
                    f"cannot set feature gate {key} to {str(requested[key]).lower()}, feature is not "
                    f"available in Kubernetes {self._release} (introduced in {first})"
                )

        explicit_now = {k for k in requested if k not in (ALL_ALPHA, ALL_BETA)}
        values = dict(self._values)
        for special, stage in ((ALL_ALPHA, ALPHA), (ALL_BETA, BETA)):
            if special in requested:
                for name in DRA_GATES:
                    if name in explicit_now or name in self._explicit:
                        continue
                    if _spec_at(name, at).stage == stage:
                        values[name] = requested[special]
        for name in explicit_now:
            values[name] = requested[name]
        return FeatureGates(self._release, values, self._explicit | explicit_now)

    # -- queries ------------------------------------------------------------------------

    @property
    def version(self) -> str:
        """The Kubernetes release whose stages and defaults this starts from."""
        return self._release

    def enabled(self, name: str) -> bool:
        """Whether the gate is on; an unknown name is an error (a typo must not read as off)."""
        try:
            return self._values[name]
        except KeyError:
            raise _unknown_gate(str(name)) from None

    def __getitem__(self, name: str) -> bool:
        return self.enabled(name)

    def __iter__(self) -> Iterator[str]:
        return iter(DRA_GATES)

    def __len__(self) -> int:
        return len(DRA_GATES)

    def __contains__(self, name: object) -> bool:
        return name in self._values

    def stage(self, name: str) -> str:
        """``ALPHA``, ``BETA``, ``GA`` or ``PRE-ALPHA`` (not introduced yet) in this release."""
        return _spec_at(known_gate(name), _minor(self._release)).stage

    def default_of(self, name: str) -> bool:
        """The gate's default in this release."""
        return _spec_at(known_gate(name), _minor(self._release)).default

    def locked(self, name: str) -> bool:
        """True when upstream locks the gate to its default in this release (the API server
        would refuse to change it; this tool allows it)."""
        return _spec_at(known_gate(name), _minor(self._release)).locked

    def introduced_in(self, name: str) -> str:
        """The release in which the gate first appeared (alpha or later)."""
        return ".".join(str(p) for p in _SPECS[known_gate(name)][0].version)

    def changed(self) -> dict[str, bool]:
        """Gates whose value differs from this release's default, sorted by name."""
        return {n: v for n, v in sorted(self._values.items()) if v != self.default_of(n)}

    def unmet_dependencies(self) -> list[str]:
        """People-facing notes for enabled gates whose upstream dependencies are off (the API
        server refuses such a configuration; this tool only warns)."""
        notes = []
        for name, deps in sorted(DEPENDENCIES.items()):
            if not self._values[name]:
                continue
            off = [d for d in deps if not self._values[d]]
            if off:
                notes.append(f"{name} is enabled, but depends on features that are disabled: [{' '.join(off)}]")
        return notes

    def as_dict(self) -> dict[str, bool]:
        """Every gate and its value, sorted by name (preview ``-o json`` "featureGates")."""
        return dict(sorted(self._values.items()))

    def to_flag(self) -> str:
        """``A=true,B=false,...`` for every gate available in this release, sorted; reading it
        back with :meth:`with_overrides` on this release's defaults gives equal gates."""
        at = _minor(self._release)
        return ",".join(
            f"{name}={'true' if value else 'false'}"
            for name, value in sorted(self._values.items())
            if _spec_at(name, at).stage != PRE_ALPHA
        )

    # -- identity -----------------------------------------------------------------------

    def __eq__(self, other: object) -> bool:
        """Equal when every gate has the same value (the release is informational)."""
        if not isinstance(other, FeatureGates):
            return NotImplemented
        return dict(self._values) == dict(other._values)

    def __hash__(self) -> int:
        if self._hash is None:
            self._hash = hash(frozenset(self._values.items()))
        return self._hash

    def __repr__(self) -> str:
        changed = ",".join(f"{k}={'true' if v else 'false'}" for k, v in self.changed().items())
        return f"FeatureGates(version={self._release!r}, changed={{{changed}}})"


#: any gate set a reader takes (FeatureGates, or a duck-typed GateReader in tests)
G = TypeVar("G", bound=GateReader)


def effective_gates(gates: G | None) -> G | FeatureGates:
    """The gate set every reader applies: ``gates``, or for a library caller that passes none
    the newest release's defaults (what a cluster runs when nobody sets a gate), so that
    validation, preview, explain, fit and usage read "no gate set" alike."""
    return gates if gates is not None else _newest_defaults()


@functools.cache
def _newest_defaults() -> FeatureGates:
    """FeatureGates.default(), made once (a gate set never changes)."""
    return FeatureGates.default()


def gate_table() -> dict[str, dict[str, tuple[str, bool]]]:
    """``{release: {gate: (stage, default)}}`` for every supported release."""
    return {
        release: {name: (_spec_at(name, _minor(release)).stage, _spec_at(name, _minor(release)).default)
                  for name in DRA_GATES}
        for release in RELEASES
    }
