"""Shared validation helpers: formats, names, metadata, node selectors, taints, binding, CEL, opaque config."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kubectl_dra.errors import FeatureGateError
from kubectl_dra.gates import FeatureGates
from kubectl_dra.validation import (
    binding,
    config,
    formats,
    gating,
    lists,
    names,
    nodeselector,
    objectmeta,
    schema,
    selectors,
    taints,
    values,
)
from kubectl_dra.validation.field import (
    DUPLICATE,
    FORBIDDEN,
    INTERNAL,
    INVALID,
    NOT_SUPPORTED,
    REQUIRED,
    TOO_LONG,
    TOO_MANY,
    FieldError,
    Path,
)

P = Path.root("x")

#: the helpers every kind's rules share, one namespace for the tables below
_HELPER_MODULES = (formats, names, objectmeta, nodeselector, taints, binding, selectors, config, lists, values, gating)
c = SimpleNamespace(**{name: getattr(m, name) for m in _HELPER_MODULES for name in m.__all__})
c.__all__ = [name for m in _HELPER_MODULES for name in m.__all__]


def kinds(errs: list[FieldError]) -> set[tuple[str, str]]:
    """Errors as a set of (type, field)."""
    return {(e.type, e.field) for e in errs}


class Gates:
    def __init__(self, *on: str) -> None:
        self.on = set(on)

    def enabled(self, name: str) -> bool:
        return name in self.on


# ---------------------------------------------------------------------------
# Formats


@pytest.mark.parametrize(
    "value, ok",
    [("a", True), ("a-b", True), ("0", True), ("a" * 63, True), ("a" * 64, False), ("-a", False),
     ("a-", False), ("A", False), ("a.b", False), ("", False), ("a_b", False),
     # Go's ``$`` ends the text; Python's would also match before a final newline
     ("a\n", False), ("a\n\n", False)],
)
def test_dns1123_label(value: str, ok: bool) -> None:
    assert (c.is_dns1123_label(value) == []) is ok


@pytest.mark.parametrize(
    "value, ok",
    [("a.b", True), ("example.com", True), ("a" * 253, True), ("a" * 254, False), ("a..b", False),
     (".a", False), ("a.", False), ("Example.com", False), ("", False), ("example.com\n", False)],
)
def test_dns1123_subdomain(value: str, ok: bool) -> None:
    assert (c.is_dns1123_subdomain(value) == []) is ok


@pytest.mark.parametrize(
    "value, ok",
    [("MyName", True), ("my.name", True), ("123-abc", True), ("example.com/MyName", True),
     ("a" * 63, True), ("a" * 64, False), ("/a", False), ("a/", False), ("a/b/c", False),
     ("Example.com/a", False), ("-a", False), ("a b", False), ("", False), ("a\n", False),
     ("example.com/a\n", False), ("example.com\n/a", False)],
)
def test_qualified_name(value: str, ok: bool) -> None:
    assert (c.is_qualified_name(value) == []) is ok


@pytest.mark.parametrize(
    "value, ok", [("", True), ("MyValue", True), ("my_value", True), ("a" * 63, True), ("a" * 64, False),
                  ("a b", False), ("-a", False), ("a\n", False)],
)
def test_label_value(value: str, ok: bool) -> None:
    assert (c.is_valid_label_value(value) == []) is ok


@pytest.mark.parametrize(
    "value, ok", [("my_name", True), ("_x", True), ("MyName1", True), ("1a", False), ("a-b", False),
                  ("a.b", False), ("", False), ("a\n", False)],
)
def test_c_identifier(value: str, ok: bool) -> None:
    assert (c.is_c_identifier(value) == []) is ok


@pytest.mark.parametrize(
    "value, ok",
    [("1.2.3", True), ("0.0.0", True), ("1.2.3-alpha.1+build.5", True), ("1.2.3-0a", True),
     ("1.2.3--", True), ("1.2", False), ("v1.2.3", False), ("01.2.3", False), ("1.2.3-01", False),
     ("1.2.3-", False), ("1.2.3+", False), ("1.2.3-a..b", False), ("1.2.3 ", False),
     ("1.2.3\n", False)],
)
def test_semver(value: str, ok: bool) -> None:
    assert c.is_semver(value) is ok


@given(st.from_regex(r"\A[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?\Z"))
def test_every_regex_label_is_accepted(value: str) -> None:
    assert c.is_dns1123_label(value) == []


@pytest.mark.parametrize("max_len, head, tail", [(96, 47, 46), (63, 30, 30), (5, 7, 6)])
def test_middle_truncate(max_len: int, head: int, tail: int) -> None:
    key = "".join(chr(ord("a") + i % 26) for i in range(200))
    short = c.middle_truncate(key, max_len)
    assert short == key[:head] + "..." + key[-tail:]
    assert len(short) == max(max_len, 16)
    assert c.middle_truncate("abc", max_len) == "abc"


# ---------------------------------------------------------------------------
# Names


def test_driver_name_rules() -> None:
    assert c.validate_driver_name("dra.example.com", P) == []
    assert c.validate_driver_name("DRA.Example.COM", P) == []  # checked lower-cased
    assert kinds(c.validate_driver_name("", P)) == {(REQUIRED, "x"), (INVALID, "x")}
    assert (TOO_LONG, "x") in kinds(c.validate_driver_name("a" * 64, P))
    assert kinds(c.validate_driver_name("a_b", P)) == {(INVALID, "x")}


def test_pool_name_reports_each_bad_segment() -> None:
    assert c.validate_pool_name("a/b.c/d", P) == []
    assert c.validate_pool_name("a" * 253, P) == []
    assert kinds(c.validate_pool_name("", P)) == {(REQUIRED, "x")}
    assert len(c.validate_pool_name("a//B", P)) == 2
    assert (TOO_LONG, "x") in kinds(c.validate_pool_name("a" * 254, P))


@pytest.mark.parametrize(
    "name, expected",
    [
        ("model", set()),
        ("dra.example.com/model", set()),
        ("a" * 32, set()),
        ("a" * 33, {(TOO_LONG, "x")}),
        ("d.com/" + "a" * 33, {(TOO_LONG, "x")}),
        ("/model", {(INVALID, "x")}),
        ("dra.example.com/", {(INVALID, "x")}),
        ("a/b/c", {(INVALID, "x")}),
        ("bad-id", {(INVALID, "x")}),
        ("", {(INVALID, "x")}),
        ("a" * 64 + "/x", {(TOO_LONG, "x")}),
    ],
)
def test_qualified_attribute_name(name: str, expected: set[tuple[str, str]]) -> None:
    assert kinds(c.validate_qualified_name(name, P)) == expected


def test_fully_qualified_name_needs_domain() -> None:
    assert c.validate_fully_qualified_name("dra.example.com/model", P) == []
    errs = c.validate_fully_qualified_name("model", P)
    assert [e.type for e in errs] == [INVALID]
    assert "domain" in errs[0].message


# ---------------------------------------------------------------------------
# Object metadata


def test_object_meta_cluster_scoped() -> None:
    meta = {"name": "ok", "labels": {"a": "b"}, "annotations": {"Example.com/X": "y"}, "finalizers": ["example.com/f"]}
    assert c.validate_object_meta(meta, False) == []
    assert kinds(c.validate_object_meta({}, False)) == {(REQUIRED, "metadata.name")}
    assert c.validate_object_meta({"generateName": "gen-"}, False) == []
    assert kinds(c.validate_object_meta({"generateName": "Gen-"}, False)) == {(INVALID, "metadata.generateName")}
    assert kinds(c.validate_object_meta({"name": "a", "namespace": "ns"}, False)) == {(FORBIDDEN, "metadata.namespace")}


def test_object_meta_namespaced() -> None:
    assert kinds(c.validate_object_meta({"name": "a"}, True)) == {(REQUIRED, "metadata.namespace")}
    assert kinds(c.validate_object_meta({"name": "a", "namespace": "Bad"}, True)) == {(INVALID, "metadata.namespace")}


def test_labels_annotations_finalizers() -> None:
    meta = {"name": "a", "labels": {"bad key!": "v", "k": "bad value"}}
    errs = c.validate_object_meta(meta, False)
    assert kinds(errs) == {(INVALID, "metadata.labels")} and len(errs) == 2
    big = {"name": "a", "annotations": {"k": "x" * (256 * 1024)}}
    assert kinds(c.validate_object_meta(big, False)) == {(TOO_LONG, "metadata.annotations")}
    fin = {"name": "a", "finalizers": ["custom", "kubernetes", "orphan"]}
    errs = c.validate_object_meta(fin, False)
    assert [(e.field, e.value) for e in errs] == [("metadata.finalizers", "custom")]
    owner = {"name": "a", "ownerReferences": [{"apiVersion": "v1", "kind": "X", "name": "n"}]}
    assert kinds(c.validate_object_meta(owner, False)) == {(INVALID, "metadata.ownerReferences.uid")}


def test_object_meta_update() -> None:
    old = {"name": "a", "uid": "u1", "resourceVersion": "5"}
    assert c.validate_object_meta_update({"name": "a"}, old) == []  # uid copied from the stored object
    assert kinds(c.validate_object_meta_update({"name": "b"}, old)) == {(INVALID, "metadata.name")}
    assert kinds(c.validate_object_meta_update({"name": "a", "uid": "u2"}, old)) == {(INVALID, "metadata.uid")}
    assert kinds(c.validate_object_meta_update({"name": "a", "labels": {"k": "a b"}}, old)) == {
        (INVALID, "metadata.labels")
    }


# ---------------------------------------------------------------------------
# Node selectors


def test_node_selector_rules() -> None:
    path = Path.root("spec", "nodeSelector")
    assert kinds(c.validate_node_selector({}, path)) == {(REQUIRED, "spec.nodeSelector.nodeSelectorTerms")}
    selector = {
        "nodeSelectorTerms": [
            {
                "matchExpressions": [
                    {"key": "zone", "operator": "In", "values": ["a", "bad value"]},
                    {"key": "k", "operator": "In"},
                    {"key": "k", "operator": "Exists", "values": ["x"]},
                    {"key": "k", "operator": "Gt", "values": ["1", "2"]},
                    {"key": "bad key!", "operator": "Bogus"},
                ],
                "matchFields": [
                    {"key": "metadata.name", "operator": "In", "values": ["Node_1"]},
                    {"key": "spec.x", "operator": "Exists"},
                ],
            }
        ]
    }
    t = "spec.nodeSelector.nodeSelectorTerms[0]"
    assert kinds(c.validate_node_selector(selector, path)) == {
        (INVALID, f"{t}.matchExpressions[0].values[1]"),
        (REQUIRED, f"{t}.matchExpressions[1].values"),
        (FORBIDDEN, f"{t}.matchExpressions[2].values"),
        (REQUIRED, f"{t}.matchExpressions[3].values"),
        (INVALID, f"{t}.matchExpressions[4].operator"),
        (INVALID, f"{t}.matchExpressions[4].key"),
        (INVALID, f"{t}.matchFields[0].values[0]"),
        (INVALID, f"{t}.matchFields[1].operator"),
        (INVALID, f"{t}.matchFields[1].key"),
    }


# ---------------------------------------------------------------------------
# Taints, tolerations, binding conditions, skipNodeOperations


def test_device_taint() -> None:
    assert c.validate_device_taint({"key": "example.com/k", "value": "v", "effect": "NoExecute"}, P) == []
    assert c.validate_device_taint({"key": "k", "effect": "None"}, P) == []
    assert kinds(c.validate_device_taint({"key": "", "value": "a b"}, P)) == {
        (INVALID, "x.key"), (INVALID, "x.value"), (REQUIRED, "x.effect")
    }
    assert kinds(c.validate_device_taint({"key": "k", "effect": "PreferNoSchedule"}, P)) == {(NOT_SUPPORTED, "x.effect")}


def test_device_toleration() -> None:
    assert c.validate_device_toleration({"operator": "Exists"}, P) == []
    assert c.validate_device_toleration({"key": "k", "operator": "Equal", "value": "v", "effect": "NoSchedule"}, P) == []
    assert kinds(c.validate_device_toleration({"operator": "Exists", "value": "v"}, P)) == {(INVALID, "x.value")}
    assert kinds(c.validate_device_toleration({}, P)) == {(REQUIRED, "x.operator")}
    assert kinds(c.validate_device_toleration({"operator": "Lt"}, P)) == {(NOT_SUPPORTED, "x.operator")}
    assert c.validate_device_toleration({"operator": "Exists", "effect": "None"}, P) == []
    older = c.validate_device_toleration({"operator": "Exists", "effect": "None"}, P, effects=c.TOLERATION_EFFECTS)
    assert kinds(older) == {(NOT_SUPPORTED, "x.effect")}


def test_binding_conditions() -> None:
    ok = {"bindingConditions": ["a", "b"], "bindingFailureConditions": ["c"]}
    assert c.validate_binding_conditions(ok, P) == []
    too_many = {"bindingConditions": ["a", "b", "c", "d", "a"], "bindingFailureConditions": ["f"]}
    # the count short-circuits the per-item syntax, not the duplicate check
    assert kinds(c.validate_binding_conditions(too_many, P)) == {
        (TOO_MANY, "x.bindingConditions"), (DUPLICATE, "x.bindingConditions[4]")
    }
    overlap = {"bindingConditions": ["a"], "bindingFailureConditions": ["a", "bad key!"]}
    assert kinds(c.validate_binding_conditions(overlap, P)) == {
        (INVALID, "x.bindingFailureConditions[0]"), (INVALID, "x.bindingFailureConditions[1]")
    }
    assert kinds(c.validate_binding_conditions({"bindingConditions": ["a"]}, P)) == {
        (INVALID, "x.bindingFailureConditions")
    }


def test_skip_node_operations() -> None:
    assert c.validate_skip_node_operations(["NodePrepareResources", "*"], P) == []
    assert c.validate_skip_node_operations(["NodeUnprepareResources"], P) == []
    assert kinds(c.validate_skip_node_operations(["NodePrepareResources"], P)) == {(INVALID, "x")}
    assert kinds(c.validate_skip_node_operations(["Other", "*", "*"], P)) == {
        (NOT_SUPPORTED, "x[0]"), (DUPLICATE, "x[2]")
    }


def test_validate_list_short_circuits_entries() -> None:
    seen: list[str] = []

    def item(v: str, p: Path) -> list[FieldError]:
        seen.append(str(p))
        return []

    assert kinds(c.validate_list(["a", "a", "a"], P, 2, item, key=str)) == {(TOO_MANY, "x")}
    assert seen == []
    assert kinds(c.validate_list(["a", "b", "a"], P, 3, item, key=str)) == {(DUPLICATE, "x[2]")}
    assert seen == ["x[0]", "x[1]", "x[2]"]


# ---------------------------------------------------------------------------
# CEL selectors and opaque configuration


def test_selector_requires_cel() -> None:
    assert kinds(c.validate_selector({}, P, Gates())) == {(REQUIRED, "x.cel")}


def test_cel_selector_outcomes() -> None:
    gates = Gates()
    assert c.validate_cel_selector({"expression": 'device.driver == "a"'}, P, gates) == []
    assert kinds(c.validate_cel_selector({"expression": "device.driver"}, P, gates)) == {(INVALID, "x.expression")}
    assert kinds(c.validate_cel_selector({"expression": "1 +"}, P, gates)) == {(INVALID, "x.expression")}
    long = {"expression": "true && " * 1300 + "true"}
    assert kinds(c.validate_cel_selector(long, P, gates)) == {(TOO_LONG, "x.expression")}
    # a stored (unchanged) expression is not checked at all
    assert c.validate_cel_selector({"expression": "1 +"}, P, gates, stored=True) == []


def test_cel_selector_gated_field() -> None:
    expr = {"expression": "device.allowMultipleAllocations"}
    assert kinds(c.validate_cel_selector(expr, P, Gates())) == {(INVALID, "x.expression")}
    assert c.validate_cel_selector(expr, P, Gates("DRAConsumableCapacity")) == []


def test_cel_engine_failure_is_internal(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*args: object) -> None:
        raise RuntimeError("boom")

    monkeypatch.setattr(selectors, "_check_cel", broken)
    selectors._selector_verdict.cache_clear()  # the memo may hold this expression's verdict already
    expression = {"expression": "true && true"}
    assert kinds(c.validate_cel_selector(expression, P, Gates())) == {(INTERNAL, "x.expression")}
    assert kinds(c.validate_cel_selector(expression, P, Gates())) == {(INTERNAL, "x.expression")}  # not remembered
    monkeypatch.undo()
    assert c.validate_cel_selector(expression, P, Gates()) == []


def test_opaque_configuration() -> None:
    ok = {"driver": "dra.example.com", "parameters": {"a": 1}}
    assert c.validate_opaque_configuration(ok, P) == []
    assert kinds(c.validate_opaque_configuration({"driver": "dra.example.com"}, P)) == {(REQUIRED, "x.parameters")}
    null = {"driver": "d.example.com", "parameters": None}
    assert kinds(c.validate_opaque_configuration(null, P)) == {(REQUIRED, "x.parameters")}
    array = {"driver": "d.example.com", "parameters": [1, 2]}
    assert kinds(c.validate_opaque_configuration(array, P)) == {(INVALID, "x.parameters")}
    big = {"driver": "d.example.com", "parameters": {"k": "x" * 10240}}
    assert kinds(c.validate_opaque_configuration(big, P)) == {(TOO_LONG, "x.parameters")}
    assert c.validate_opaque_configuration(big, P, stored=True) == []
    assert kinds(c.validate_opaque_configuration({"parameters": {}}, P)) == {(REQUIRED, "x.driver"), (INVALID, "x.driver")}


def test_parse_quantity_by_value() -> None:
    assert c.parse_quantity("1Ki") == c.parse_quantity(1024)
    assert c.parse_quantity("500m").value * 2 == 1
    with pytest.raises(c.QuantityError):
        c.parse_quantity("1 Gi x")


def test_gate_enabled_duck_typed() -> None:
    # no gate set: the newest release's defaults, as every reader takes it (gates.effective_gates)
    assert c.gate_enabled(None, "DRAAdminAccess") is FeatureGates.default().enabled("DRAAdminAccess") is True
    assert c.gate_enabled(None, "DRAResourcePoolStatus") is False  # alpha: off by default
    assert c.gate_enabled(Gates("DRAAdminAccess"), "DRAAdminAccess") is True
    with pytest.raises(FeatureGateError):  # a name outside the gate table is refused, not read as off
        c.gate_enabled(Gates("X"), "X")


# ---------------------------------------------------------------------------
# Shapes


def test_schema_reports_type_errors_at_paths() -> None:
    spec = {"n": schema.INT, "b": schema.BOOL, "q": schema.QUANTITY, "l": [schema.STR],
            "m": schema.map_of({"v": schema.STR}), "any": schema.ANY}
    compiled = schema.Schema(spec)
    value = {"n": True, "b": 1, "q": "1 Gi", "l": ["a", 2], "m": {"k": {"v": []}}, "any": object(), "extra": 1}
    assert not compiled.fits(value)
    assert kinds(schema.type_errors(compiled, value, P)) == {
        ("FieldValueTypeInvalid", "x.n"),
        ("FieldValueTypeInvalid", "x.b"),
        ("FieldValueTypeInvalid", "x.q"),
        ("FieldValueTypeInvalid", "x.l[1]"),
        ("FieldValueTypeInvalid", "x.m[k].v"),
    }
    assert schema.type_errors(compiled, {"n": None, "q": 5, "l": None}, P) == []
    assert schema.type_errors(compiled, {"n": 2**63 - 1, "q": 5}, P) == []
    assert kinds(schema.type_errors(compiled, {"n": 2**63}, P)) == {("FieldValueTypeInvalid", "x.n")}
    assert kinds(schema.type_errors(compiled, {"n": -(2**63) - 1}, P)) == {("FieldValueTypeInvalid", "x.n")}
    assert kinds(schema.type_errors(compiled, [], P)) == {("FieldValueTypeInvalid", "x")}


def test_integers_are_int64_in_every_kind() -> None:
    """One integer rule: a count beyond int64 fails to decode as a generation beyond it does."""
    claim = {"kind": "ResourceClaim", "metadata": {"name": "c", "generation": 2**63},
             "spec": {"devices": {"requests": [{"name": "r", "exactly": {"count": 2**64}}]}}}
    assert {e.field for e in schema.decode_errors(claim, "ResourceClaim")} == {
        "metadata.generation", "spec.devices.requests[0].exactly.count"}
    assert all(e.message == "must be a 64-bit integer (out of range)"
               for e in schema.decode_errors(claim, "ResourceClaim"))


def test_timestamps_may_arrive_as_datetimes() -> None:
    import datetime

    taint = {"key": "k", "effect": "NoSchedule", "timeAdded": datetime.datetime(2026, 1, 1)}
    compiled = schema.Schema(schema.DEVICE_TAINT)
    assert schema.type_errors(compiled, taint, P) == []
    assert kinds(schema.type_errors(compiled, dict(taint, timeAdded=5), P)) == {("FieldValueTypeInvalid", "x.timeAdded")}


def test_annotation_size_counts_bytes() -> None:
    meta = {"name": "a", "annotations": {"k": "é" * (128 * 1024)}}  # 128 Ki characters, 256 KiB + 1 bytes
    assert kinds(c.validate_object_meta(meta, False)) == {(TOO_LONG, "metadata.annotations")}


@pytest.mark.parametrize(
    "a, b, quantities, equal",
    [
        (None, [], False, True),
        ({"a": None}, {}, False, True),
        ({"a": ""}, {"b": []}, False, True),
        ({"v": "1Gi"}, {"v": "1024Mi"}, True, True),
        ({"v": "1Gi"}, {"v": "1024Mi"}, False, False),
        ([1, 2], [2, 1], False, False),
        (True, 1, True, False),
        ("x", "y", True, False),
        ({"k": {"v": "1"}}, {"k": {"v": 1}}, True, True),
    ],
)
def test_semantic_equal(a: object, b: object, quantities: bool, equal: bool) -> None:
    assert c.semantic_equal(a, b, quantities) is equal
    assert c.semantic_equal(b, a, quantities) is equal


def test_empty_fully_qualified_name_is_invalid_not_required() -> None:
    """Upstream's newest validateQualifiedName has no Required branch: an empty name is an invalid
    C identifier, and the missing domain is a second Invalid."""
    errs = c.validate_fully_qualified_name("", P)
    assert [e.type for e in errs] == [INVALID, INVALID]
    assert errs[1].message == "a fully qualified name must be a domain and a name separated by a slash"


_STRING_HELPERS = [
    c.validate_dns_label, c.validate_dns_subdomain, c.validate_label_name, c.validate_label_value,
    c.validate_driver_name, c.validate_pool_name, c.validate_device_name, c.validate_node_name,
    c.validate_c_identifier, c.validate_qualified_name, c.validate_fully_qualified_name,
]


@pytest.mark.parametrize("helper", _STRING_HELPERS, ids=lambda f: f.__name__)
@pytest.mark.parametrize("value", [5, True, ["a"], {"a": "b"}, 1.5])
def test_string_helpers_report_wrong_types_instead_of_raising(helper, value) -> None:
    errs = helper(value, P)
    assert [(e.type, e.field) for e in errs] == [("FieldValueTypeInvalid", "x")]
    assert errs[0].message.startswith("must be a string")


@pytest.mark.parametrize("helper", _STRING_HELPERS, ids=lambda f: f.__name__)
def test_string_helpers_treat_none_as_empty(helper) -> None:
    assert helper(None, P) == helper("", P)


@pytest.mark.parametrize(
    ("call", "field"),
    [
        (lambda: c.validate_object_meta([1], True), "metadata"),
        (lambda: c.validate_object_meta({"name": 5}, True), "metadata.name"),
        (lambda: c.validate_object_meta_update({"labels": []}, {}), "metadata.labels"),
        (lambda: c.validate_template_meta("x", P), "x"),
        (lambda: c.validate_finalizers(3, P), "x"),
        (lambda: c.validate_node_selector([{}], P), "x"),
        (lambda: c.validate_node_selector({"nodeSelectorTerms": ["a"]}, P), "x.nodeSelectorTerms[0]"),
        (lambda: c.validate_node_selector_term({"matchExpressions": [{"key": 1}]}, P), "x.matchExpressions[0].key"),
        (lambda: c.validate_device_taint([], P), "x"),
        (lambda: c.validate_device_toleration({"tolerationSeconds": "soon"}, P), "x.tolerationSeconds"),
        (lambda: c.validate_binding_conditions({"bindingConditions": [{}]}, P), "x.bindingConditions[0]"),
        (lambda: c.validate_skip_node_operations([["a"]], P), "x[0]"),
        (lambda: c.validate_selectors("x", P, None), "x"),
        (lambda: c.validate_selector({"cel": "true"}, P, None), "x.cel"),
        (lambda: c.validate_cel_selector({"expression": 1}, P, None), "x.expression"),
        (lambda: c.validate_opaque_configuration("x", P), "x"),
        (lambda: c.validate_raw_extension("x", "parameters", P, False, 10), "x"),
    ],
)
def test_structured_helpers_report_wrong_types_instead_of_raising(call, field: str) -> None:
    errs = call()
    assert errs and all(e.type == "FieldValueTypeInvalid" for e in errs)
    assert errs[0].field == field


@given(st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=5),
                    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(
                        st.sampled_from(["key", "operator", "values", "effect", "value", "name", "labels",
                                         "nodeSelectorTerms", "matchExpressions", "cel", "expression", "driver",
                                         "parameters", "bindingConditions", "finalizers"]), inner, max_size=4),
                    max_leaves=10))
def test_no_helper_raises_on_any_json_value(value) -> None:
    """Every public field check answers with field errors for any decoded JSON value."""
    for name in c.__all__:
        if not name.startswith("validate_") or name in (
            # shapes and the claim-side checks that take an already decoded object
            "validate_list", "validate_map", "validate_raw_extension", "validate_immutable_field",
            "validate_device_configuration",
        ):
            continue
        helper = getattr(c, name)
        if name == "validate_object_meta":
            result = helper(value, True)
        elif name == "validate_object_meta_update":
            result = helper(value, value)
        elif name in ("validate_selectors", "validate_selector", "validate_cel_selector"):
            result = helper(value, P, None)
        else:
            result = helper(value, P)
        assert isinstance(result, list)
