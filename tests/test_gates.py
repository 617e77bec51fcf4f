"""Feature gates: per-release stages and defaults, --feature-gates parsing, AllAlpha/AllBeta."""

from __future__ import annotations

import pytest

from kubectl_dra.errors import FeatureGateError, UsageError
from kubectl_dra.gates import (
    ALPHA,
    BETA,
    DRA_GATES,
    GA,
    LATEST,
    PRE_ALPHA,
    RELEASES,
    FeatureGates,
    gate_table,
)

FG = FeatureGates

REQUIRED_GATES = {
    "DynamicResourceAllocation", "DRAAdminAccess", "DRAPrioritizedList", "DRAPartitionableDevices",
    "DRADeviceTaints", "DRADeviceTaintRules", "DRAConsumableCapacity", "DRADeviceBindingConditions",
    "DRAResourceClaimDeviceStatus", "DRAExtendedResource", "DRAListTypeAttributes", "DRADerivedAttributes",
    "DRADeviceCompatibilityGroups", "DRAOptionalNodeOperations", "DRAFractionalCapacityRange",
    "DRAWorkloadResourceClaims",
}


def test_gate_names_and_releases() -> None:
    assert set(DRA_GATES) >= REQUIRED_GATES
    assert list(DRA_GATES) == sorted(DRA_GATES)
    assert RELEASES == ("1.34", "1.35", "1.36", "1.37") and LATEST == "1.37"


# (gate, release, stage, default) confirmed against upstream's versioned feature specs
CONFIRMED = [
    ("DynamicResourceAllocation", "1.34", GA, True),
    ("DRAAdminAccess", "1.34", BETA, True), ("DRAAdminAccess", "1.36", GA, True),
    ("DRAPrioritizedList", "1.34", BETA, True), ("DRAPrioritizedList", "1.36", GA, True),
    ("DRAPartitionableDevices", "1.35", ALPHA, False), ("DRAPartitionableDevices", "1.36", BETA, True),
    ("DRAConsumableCapacity", "1.34", ALPHA, False), ("DRAConsumableCapacity", "1.36", BETA, True),
    ("DRADeviceTaints", "1.35", ALPHA, False), ("DRADeviceTaints", "1.36", BETA, True),
    ("DRADeviceTaints", "1.37", GA, True),
    ("DRADeviceTaintRules", "1.34", PRE_ALPHA, False), ("DRADeviceTaintRules", "1.35", ALPHA, False),
    ("DRADeviceTaintRules", "1.36", BETA, False), ("DRADeviceTaintRules", "1.37", GA, True),
    ("DRADeviceBindingConditions", "1.35", ALPHA, False), ("DRADeviceBindingConditions", "1.36", BETA, True),
    ("DRAResourceClaimDeviceStatus", "1.34", BETA, True), ("DRAResourceClaimDeviceStatus", "1.37", GA, True),
    ("DRAExtendedResource", "1.35", ALPHA, False), ("DRAExtendedResource", "1.37", GA, True),
    ("DRAListTypeAttributes", "1.35", PRE_ALPHA, False), ("DRAListTypeAttributes", "1.36", ALPHA, False),
    ("DRADerivedAttributes", "1.36", PRE_ALPHA, False), ("DRADerivedAttributes", "1.37", ALPHA, False),
    ("DRADeviceCompatibilityGroups", "1.37", ALPHA, False),
    ("DRAOptionalNodeOperations", "1.37", ALPHA, False),
    ("DRAFractionalCapacityRange", "1.36", PRE_ALPHA, False),
    ("DRAFractionalCapacityRange", "1.37", BETA, False),  # on only with min-compatibility 1.37
    ("DRAWorkloadResourceClaims", "1.36", ALPHA, False), ("DRAWorkloadResourceClaims", "1.37", BETA, False),
    ("DRASchedulerFilterTimeout", "1.34", BETA, True),
]


@pytest.mark.parametrize("gate,release,stage,default", CONFIRMED)
def test_per_release_stage_and_default(gate: str, release: str, stage: str, default: bool) -> None:
    gates = FG.for_version(release)
    assert gates.stage(gate) == stage
    assert gates.enabled(gate) is default
    assert gates.default_of(gate) is default
    assert gate_table()[release][gate] == (stage, default)


def test_default_is_latest() -> None:
    assert FG.default() == FG.for_version(LATEST)
    assert FG.default().version == "1.37"


@pytest.mark.parametrize("text,release", [("1.35", "1.35"), ("v1.35", "1.35"), ("1.35.2", "1.35"),
                                          ("v1.37.0", "1.37"), (" 1.34 ", "1.34")])
def test_version_forms(text: str, release: str) -> None:
    assert FG.for_version(text).version == release


@pytest.mark.parametrize("text", ["1.33", "1.38", "2.0", "latest", "", "1", "1.35.x", "v1.35-rc.1"])
def test_bad_versions(text: str) -> None:
    with pytest.raises(FeatureGateError) as err:
        FG.for_version(text)
    assert repr(text) in str(err.value)
    assert isinstance(err.value, UsageError) and err.value.exit_code == 2


def test_overrides_string_and_mapping() -> None:
    gates = FG.for_version("1.35").with_overrides("DRAPartitionableDevices=true, DRAAdminAccess = false,,")
    assert gates["DRAPartitionableDevices"] is True
    assert gates["DRAAdminAccess"] is False
    same = FG.for_version("1.35").with_overrides({"DRAPartitionableDevices": True, "DRAAdminAccess": False})
    assert same == gates
    assert FG.default().with_overrides("DRAConsumableCapacity=0")["DRAConsumableCapacity"] is False
    assert FG.default().with_overrides("DRAListTypeAttributes=T")["DRAListTypeAttributes"] is True


def test_ga_and_locked_gates_can_be_switched_off() -> None:
    gates = FG.default()
    assert gates.locked("DRAPrioritizedList") and gates.locked("DynamicResourceAllocation")
    off = gates.with_overrides("DRAPrioritizedList=false,DynamicResourceAllocation=false")
    assert off.enabled("DRAPrioritizedList") is False
    assert off.enabled("DynamicResourceAllocation") is False
    assert "DRAConsumableCapacity is enabled, but depends on features that are disabled: " \
           "[DynamicResourceAllocation]" in off.unmet_dependencies()
    assert gates.unmet_dependencies() == []


def test_all_alpha_and_all_beta() -> None:
    base = FG.for_version("1.36")
    alpha = base.with_overrides("AllAlpha=true")
    for name in DRA_GATES:
        expected = True if base.stage(name) == ALPHA else base.enabled(name)
        assert alpha.enabled(name) is expected, name
    assert alpha["DRAListTypeAttributes"] and alpha["DRAWorkloadResourceClaims"]
    assert not alpha["DRADerivedAttributes"]  # not introduced in 1.36: untouched

    beta_off = base.with_overrides("AllBeta=false")
    assert not beta_off["DRAPartitionableDevices"] and not beta_off["DRAConsumableCapacity"]
    assert beta_off["DRAAdminAccess"]  # GA in 1.36
    assert beta_off["DynamicResourceAllocation"]


@pytest.mark.parametrize("spec", [
    "AllAlpha=true,DRAListTypeAttributes=false",
    "DRAListTypeAttributes=false,AllAlpha=true",
])
def test_explicit_gate_beats_all_alpha_in_any_order(spec: str) -> None:
    gates = FG.for_version("1.36").with_overrides(spec)
    assert gates["DRAListTypeAttributes"] is False
    assert gates["DRANodeAllocatableResources"] is True


def test_explicit_settings_survive_a_later_all_alpha() -> None:
    gates = FG.default().with_overrides("DRADerivedAttributes=false").with_overrides("AllAlpha=true")
    assert gates["DRADerivedAttributes"] is False
    assert gates["DRAOptionalNodeOperations"] is True


@pytest.mark.parametrize("spec,message", [
    ("DRAFoo=true", "unrecognized feature gate: DRAFoo"),
    ("DRAPrioritisedList=true", "unrecognized feature gate: DRAPrioritisedList (did you mean DRAPrioritizedList?)"),
    ("DRAAdminAccess", "missing bool value for DRAAdminAccess"),
    ("DRAAdminAccess=yes",
     'invalid value of DRAAdminAccess=yes, err: strconv.ParseBool: parsing "yes": invalid syntax'),
    ("AllAlpha=maybe", 'invalid value of AllAlpha=maybe, err: strconv.ParseBool: parsing "maybe": invalid syntax'),
])
def test_override_errors(spec: str, message: str) -> None:
    with pytest.raises(FeatureGateError) as err:
        FG.default().with_overrides(spec)
    assert str(err.value) == message


def test_gate_not_in_release_cannot_be_set() -> None:
    with pytest.raises(FeatureGateError, match=r"DRADeviceTaintRules to true, feature is not available in "
                                               r"Kubernetes 1\.34 \(introduced in 1\.35\)"):
        FG.for_version("1.34").with_overrides("DRADeviceTaintRules=true")
    assert FG.for_version("1.35").with_overrides("DRADeviceTaintRules=true")["DRADeviceTaintRules"]


def test_mapping_value_must_be_bool() -> None:
    with pytest.raises(FeatureGateError, match="DRAAdminAccess"):
        FG.default().with_overrides({"DRAAdminAccess": "true"})  # type: ignore[dict-item]


def test_enabled_unknown_name_is_an_error() -> None:
    with pytest.raises(FeatureGateError, match="unrecognized feature gate: Nope"):
        FG.default().enabled("Nope")
    with pytest.raises(FeatureGateError):
        FG.default()["AllAlpha"]
    with pytest.raises(FeatureGateError):
        FG.default().stage("Nope")


def test_only_is_the_conformance_model() -> None:
    gates = FG.only(["DRAPartitionableDevices", "DRAConsumableCapacity"])
    on = {name for name, value in gates.items() if value}
    assert on == {"DRAPartitionableDevices", "DRAConsumableCapacity", "DynamicResourceAllocation"}
    assert FG.only([])["DRAPrioritizedList"] is False
    with pytest.raises(FeatureGateError, match="unrecognized feature gate: DRABogus"):
        FG.only(["DRABogus"])


def test_as_dict_and_flag_round_trip() -> None:
    for release in RELEASES:
        gates = FG.for_version(release).with_overrides("AllAlpha=true,DRAAdminAccess=false")
        d = gates.as_dict()
        assert list(d) == sorted(d) and set(d) == set(DRA_GATES)
        assert FG.for_version(release).with_overrides(gates.to_flag()) == gates
    assert "DRADerivedAttributes" not in FG.for_version("1.34").to_flag()


def test_immutability_equality_hash_repr() -> None:
    a = FG.default()
    b = a.with_overrides("DRAListTypeAttributes=true")
    assert a["DRAListTypeAttributes"] is False  # the original is unchanged
    assert a != b and hash(a) == hash(FG.default())
    assert len({a, FG.default(), b}) == 2
    assert len(a) == len(DRA_GATES) and "DRAAdminAccess" in a and "Nope" not in a
    assert repr(b) == "FeatureGates(version='1.37', changed={DRAListTypeAttributes=true})"
    with pytest.raises(TypeError):
        a["DRAAdminAccess"] = False  # type: ignore[index]
    assert b.changed() == {"DRAListTypeAttributes": True}
    assert FG.default().introduced_in("DRADeviceTaints") == "1.33"
