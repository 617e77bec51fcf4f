"""The shortcuts of ResourceSlice and claim validation agree with the full checks.

review() accepts the common device (name, attributes, capacity; valid scalars, no request
policy) without building a path (``_plain_device_ok``, ``scalar_attribute_ok``). Those
shortcuts may only *accept*: whatever they accept, the full checks must find nothing wrong
with; anything else goes through the full checks. These properties hold them to that, on
generated attributes and devices that mix valid values with every kind of near miss.
Claims are checked with their paths as steps (built only for an error) and with predicates
that spare the error-building checks: the same errors, at the same paths.
"""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from kubectl_dra.gates import FeatureGates
from kubectl_dra.validation.deviceattributes import device_attribute_errors, scalar_attribute_ok
from kubectl_dra.validation.field import (
    DUPLICATE,
    INVALID,
    NOT_SUPPORTED,
    REQUIRED,
    FieldError,
    Path,
    invalid,
    path_at,
)
from kubectl_dra.validation.lists import check_items, check_list
from kubectl_dra.validation.names import (
    _fully_qualified_name_problems,
    fully_qualified_name_ok,
    validate_fully_qualified_name,
)
from kubectl_dra.validation.resourceclaim import (
    RequestNames,
    _reference_problems,
    request_reference_ok,
    validate_device_claim,
    validate_request_reference,
)
from kubectl_dra.validation.resourceslice import _plain_device_ok, _validate_device

GATES = FeatureGates.default()

#: texts around the limits: semver and not, 64 bytes and over, multi-byte characters
TEXTS = st.one_of(
    st.text(max_size=70),
    st.sampled_from(["1.0.0", "v1.0.0", "1.0.0-rc.1+build.5", "01.0.0", "1.0", "1.0.0-", "1.2.3+", "",
                     "x" * 64, "x" * 65, "ü" * 32, "ü" * 33, "é" * 40, "\x00", "a\nb"]),
)
VALUES = st.one_of(
    st.none(), st.booleans(), st.integers(min_value=-2**70, max_value=2**70), st.floats(allow_nan=True), TEXTS,
    st.lists(st.one_of(st.integers(), TEXTS, st.booleans(), st.none()), max_size=3),
    st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
)
FIELDS = st.sampled_from(["bool", "int", "string", "version", "bools", "ints", "strings", "versions", "other"])
#: one scalar of the right kind, as drivers write them (the shortcut's case), near misses included
SCALARS = st.one_of(
    st.fixed_dictionaries({"bool": st.booleans()}), st.fixed_dictionaries({"int": st.integers()}),
    st.fixed_dictionaries({"string": TEXTS}), st.fixed_dictionaries({"version": TEXTS}),
)
ATTRIBUTES = st.one_of(SCALARS, SCALARS, st.dictionaries(FIELDS, VALUES, max_size=3), VALUES)

NAMES = st.one_of(st.sampled_from(["gpu-0", "gpu-0", "gpu-0", "GPU", "a" * 63, "a" * 64, "-a", "a-", "", "a.b"]),
                  st.integers(), st.none())
KEYS = st.sampled_from(["model", "model", "gpu.example.com/model", "gpu.example.com/index", "bad key", "a/b/c",
                        "x" * 63, "x" * 64, "example.com/" + "y" * 63, "example.com/" + "y" * 64, "Example.com/z",
                        "/z", "z/"])
CAPACITIES = st.one_of(
    st.fixed_dictionaries({"value": st.sampled_from(["1Gi", "80", "1.5", "bogus", 3])}),
    st.fixed_dictionaries({"value": st.just("1Gi"), "requestPolicy": st.one_of(st.none(), st.just({}))}),
    VALUES,
)
EXTRA = st.dictionaries(st.sampled_from(["taints", "consumesCounters", "nodeName", "allNodes", "bindingConditions",
                                         "allowMultipleAllocations", "nodeAllocatableResources"]),
                        st.one_of(st.none(), st.just([]), st.just(True), st.just("n")), max_size=2)


@st.composite
def devices(draw: Any) -> Any:
    """A device dict (or something that is not one) with a mix of valid and broken parts."""
    device: dict[str, Any] = {"name": draw(NAMES)}
    attributes = draw(st.dictionaries(KEYS, st.one_of(SCALARS, SCALARS, SCALARS, ATTRIBUTES), max_size=4))
    for i in range(draw(st.sampled_from([0, 0, 0, 30, 33, 48, 60]))):  # around the per-device limits
        attributes[f"k{i}"] = {"int": i}
    if draw(st.booleans()):
        device["attributes"] = attributes
    if draw(st.booleans()):
        device["capacity"] = draw(st.dictionaries(KEYS, CAPACITIES, max_size=3))
    if draw(st.integers(0, 3)) == 0:
        device.update(draw(EXTRA))
    return draw(st.one_of(st.just(device), st.just(device), st.just(device), VALUES))


@settings(max_examples=1500, deadline=None)
@given(ATTRIBUTES)
def test_an_attribute_the_shortcut_accepts_has_no_errors(attr: Any) -> None:
    if scalar_attribute_ok(attr):
        assert device_attribute_errors(attr, Path.root("a")) == []


def test_the_attribute_shortcut_accepts_the_common_values() -> None:
    for attr in ({"bool": True}, {"int": 7}, {"string": "a100"}, {"version": "550.54.15"}, {"string": "ü" * 32}):
        assert scalar_attribute_ok(attr), attr
    for attr in ({"string": "x" * 65}, {"version": "1.0"}, {"int": 1, "bool": True}, {"strings": ["a"]}, {}):
        assert not scalar_attribute_ok(attr), attr


@settings(max_examples=1500, deadline=None)
@given(devices(), st.booleans())
def test_a_device_the_shortcut_accepts_has_no_errors(device: Any, twice: bool) -> None:
    valid_keys: set[str] = set()
    if twice:  # the second look reads the keys the first one found valid
        _plain_device_ok(device, valid_keys)
    if _plain_device_ok(device, valid_keys):
        assert _validate_device(device, None, Path.root("d"), None, GATES) == []


def test_the_device_shortcut_accepts_the_common_device() -> None:
    device = {"name": "gpu-0", "attributes": {"gpu.example.com/model": {"string": "a100"}, "index": {"int": 0}},
              "capacity": {"memory": {"value": "80Gi"}}}
    assert _plain_device_ok(device, set())
    assert not _plain_device_ok({**device, "taints": []}, set())  # any other field: the full checks


# -- claims: predicates that spare a path, and the lazily built paths themselves ----------------

REFERENCES = st.one_of(
    st.sampled_from(["gpu", "nic", "gpu/a", "gpu/b", "nic/a", "a/b/c", "", "/", "gpu/", "/a", "GPU", "gpu/A",
                     "x" * 63, "x" * 64, "gpu\n", "nic/a/"]),
    st.text(alphabet="abg/-pu", max_size=8),
)


@settings(max_examples=1500, deadline=None)
@given(REFERENCES, st.sampled_from([None, ["a", "b"], []]))
def test_a_request_reference_is_ok_exactly_when_it_has_no_errors(reference: str, subrequests: Any) -> None:
    requests: list[dict[str, Any]] = [{"name": "gpu", "exactly": {}}, {"name": "x" * 63, "exactly": {}}]
    requests.append({"name": "nic", "firstAvailable": [{"name": s} for s in subrequests]} if subrequests is not None
                    else {"name": "nic", "exactly": {}})
    names = RequestNames({"requests": requests})
    problems = _reference_problems(reference, Path.root("r"), names)  # the long way, no shortcut
    assert request_reference_ok(reference, names) == (problems == [])
    assert validate_request_reference(reference, Path.root("r"), names) == problems


@settings(max_examples=800, deadline=None)
@given(st.one_of(KEYS, st.text(max_size=12), st.integers(), st.none()))
def test_a_fully_qualified_name_is_ok_exactly_when_it_has_no_errors(name: Any) -> None:
    if not isinstance(name, str):
        assert not fully_qualified_name_ok(name)
        return
    problems = _fully_qualified_name_problems(name, Path.root("m"))  # the long way, no shortcut
    assert fully_qualified_name_ok(name) == (problems == [])
    assert validate_fully_qualified_name(name, Path.root("m")) == problems


ITEMS = st.lists(st.one_of(st.sampled_from(["a", "a", "b", "bad", ""]), st.none(), st.integers(0, 2),
                           st.lists(st.integers(0, 1), max_size=2)), max_size=7)


@settings(max_examples=800, deadline=None)
@given(ITEMS, st.sampled_from([None, 3, 5]), st.booleans(), st.booleans())
def test_check_items_reports_what_check_list_reports(items: list[Any], limit: int | None, keyed: bool,
                                                     short_circuit: bool) -> None:
    """The same TooMany, item errors (at the same paths) and Duplicates, whichever way the path is given."""
    def bad_item(item: Any, path: Path) -> list[FieldError]:
        return [invalid(path.child("name"), item, "bad")] if item == "bad" else []

    key = (lambda item: item) if keyed else None
    base = Path.root("spec", "items")
    by_path = check_list(items, base, limit, bad_item, key=key, short_circuit=short_circuit)
    by_steps = check_items(items, (Path.root("spec"), "items"), limit if limit is not None else len(items),
                           lambda item, where: bad_item(item, path_at(where)), key=key, short_circuit=short_circuit)
    assert by_steps == by_path


def test_steps_stand_for_the_path_they_name() -> None:
    assert str(path_at((Path.root("spec", "devices"), "requests", 3, "firstAvailable", 0, "selectors"))) == (
        "spec.devices.requests[3].firstAvailable[0].selectors")
    assert str(path_at((Path.root("spec"),))) == "spec"


def test_a_claim_reports_each_error_at_its_path() -> None:
    """Every rule of a device claim that builds its path only for an error, at once."""
    devices = {
        "requests": [
            {"name": "GPU", "exactly": {"deviceClassName": "Bad_Class", "allocationMode": "Some",
                                        "selectors": [{}, {"cel": {"expression": "1 +"}}],
                                        "tolerations": [{"operator": "Lt"}]}},
            {"name": "nic", "firstAvailable": [{"name": "-a", "deviceClassName": "", "count": -1,
                                                "allocationMode": "ExactCount"},
                                               {"name": "-a", "deviceClassName": "c", "allocationMode": "All",
                                                "count": 2}]},
            {"name": "nic"},
        ],
        "constraints": [{"requests": ["nope", "nic/-a", "nic/-a"], "matchAttribute": "bad"}, {}],
        "config": [{"requests": ["x/y/z"], "opaque": None}],
    }
    base = "spec.devices"
    errors = validate_device_claim(devices, Path.root("spec", "devices"), GATES)
    assert [(e.type, e.field) for e in errors] == [
        (INVALID, f"{base}.requests[0].name"),
        (INVALID, f"{base}.requests[0].exactly.deviceClassName"),
        (REQUIRED, f"{base}.requests[0].exactly.selectors[0].cel"),
        (INVALID, f"{base}.requests[0].exactly.selectors[1].cel.expression"),
        (NOT_SUPPORTED, f"{base}.requests[0].exactly.allocationMode"),
        (NOT_SUPPORTED, f"{base}.requests[0].exactly.tolerations[0].operator"),
        (INVALID, f"{base}.requests[1].firstAvailable[0].name"),
        (REQUIRED, f"{base}.requests[1].firstAvailable[0].deviceClassName"),
        (INVALID, f"{base}.requests[1].firstAvailable[0].count"),
        (INVALID, f"{base}.requests[1].firstAvailable[1].name"),
        (INVALID, f"{base}.requests[1].firstAvailable[1].count"),
        (DUPLICATE, f"{base}.requests[1].firstAvailable[1]"),
        (REQUIRED, f"{base}.requests[2]"),
        (DUPLICATE, f"{base}.requests[2]"),
        (INVALID, f"{base}.constraints[0].requests[0]"),  # names no request
        (INVALID, f"{base}.constraints[0].requests[1]"),  # "-a" is no DNS label
        (INVALID, f"{base}.constraints[0].requests[1]"),  # the last request named nic has no subrequests
        (INVALID, f"{base}.constraints[0].requests[2]"),
        (INVALID, f"{base}.constraints[0].requests[2]"),
        (DUPLICATE, f"{base}.constraints[0].requests[2]"),
        (INVALID, f"{base}.constraints[0].matchAttribute"),
        (REQUIRED, f"{base}.constraints[1]"),
        (INVALID, f"{base}.config[0].requests[0]"),
        (REQUIRED, f"{base}.config[0].opaque"),
    ]
