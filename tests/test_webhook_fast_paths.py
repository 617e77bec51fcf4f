"""The admission fast paths give exactly the answers of the slow reference paths.

- request bodies: orjson where it agrees with :func:`json.loads`, json everywhere else;
- the JSONPatch of a decision: computed only over the changed part, equal to jsonpatch's
  whole-document diff;
- decoding: a compiled schema's boolean pass accepts exactly what its error walk finds nothing in.
"""

from __future__ import annotations

import copy
import json
import math
from typing import Any

import jsonpatch
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from kubectl_dra.model import jsoncopy
from kubectl_dra.model.jsoncopy import copy_json
from kubectl_dra.validation import admission, schema
from kubectl_dra.validation.field import Path
from webhook.review import _loads

SCALARS = st.none() | st.booleans() | st.integers(min_value=-(2**70), max_value=2**70) | st.floats(
    allow_nan=False) | st.text(max_size=6)
JSON = st.recursive(SCALARS, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(
    st.sampled_from(["a", "b", "c", "x/y", "m~n", "name"]), inner, max_size=4), max_leaves=25)


def _same_json(a: Any, b: Any, ordered: bool = True) -> bool:
    """Equal values of equal Python types all the way down (1, 1.0 and True differ); with
    ``ordered``, object members in the same order too."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        same_keys = list(a) == list(b) if ordered else a.keys() == b.keys()
        return same_keys and all(_same_json(a[k], b[k], ordered) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(_same_json(x, y, ordered) for x, y in zip(a, b))
    if isinstance(a, float) and math.isnan(a):
        return math.isnan(b)
    return a == b


@settings(max_examples=300, deadline=None)
@given(JSON)
def test_body_decoding_matches_json(value: Any) -> None:
    body = json.dumps(value).encode()
    assert _same_json(_loads(body), json.loads(body))


@pytest.mark.parametrize("body", [
    b"\xef\xbb\xbf{}", b"[NaN, Infinity]", b"[1e400]", b'["\\ud800"]', b"[123456789012345678901234567890]",
    b"[18446744073709551616]", b'{"a":1,"a":2}', "{\"\u00e9\": 1}".encode("utf-16"),
])
def test_bodies_orjson_refuses_or_reads_differently_are_read_by_json(body: bytes) -> None:
    assert _same_json(_loads(body), json.loads(body))


@pytest.mark.parametrize("body", [b"{oops", b"\xff\xfe\x00", b"[1,]", b"", b"nul"])
def test_malformed_bodies_fail_like_json(body: bytes) -> None:
    with pytest.raises(ValueError) as ours:
        _loads(body)
    with pytest.raises(ValueError) as reference:
        json.loads(body)
    assert str(ours.value) == str(reference.value)


def _mutate(value: Any, choice: int) -> Any:
    """A copy of ``value`` with one nested change picked by ``choice`` (or none)."""
    out = copy.deepcopy(value)
    node = out
    for step in range(8):
        if isinstance(node, dict) and node:
            keys = sorted(node)
            key = keys[(choice >> step) % len(keys)]
            if isinstance(node[key], (dict, list)) and node[key] and choice % 3:
                node = node[key]
                continue
            if choice % 5 == 4:  # members added next to the existing ones, as defaulting does
                node.update({"new~/": {"a": [1]}, "other": choice})
            else:
                node[key] = [node[key], "changed"] if choice % 2 else True
            return out
        if isinstance(node, list) and node:
            i = (choice >> step) % len(node)
            if isinstance(node[i], (dict, list)) and node[i]:
                node = node[i]
                continue
            node.append(1) if choice % 2 else node.pop(i)
            return out
        break
    return out


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(JSON, st.integers(min_value=0, max_value=2**16))
# jsonpatch's own patch moves members, so the patched object may list them in another order
@example({"a": [[None, {}, None, None], {"a": None, "b": None}]}, 1071)
def test_patch_equals_the_whole_document_diff(src: Any, choice: int) -> None:
    dst = _mutate(src, choice)
    ours = admission.make_patch(src, dst)
    assert ours == jsonpatch.make_patch(src, dst).patch
    # the same values; member order is not part of a JSON object (the API server decodes it into structs)
    assert _same_json(jsonpatch.apply_patch(copy.deepcopy(src), ours), dst, ordered=False)


@settings(max_examples=200, deadline=None)
@given(JSON, JSON)
def test_patch_equals_the_whole_document_diff_for_unrelated_values(src: Any, dst: Any) -> None:
    assert admission.make_patch(src, dst) == jsonpatch.make_patch(src, dst).patch


def test_patch_of_types_python_thinks_equal() -> None:
    for src, dst in (({"a": {"b": 1}}, {"a": {"b": True}}), ({"a": [1, 2]}, {"a": [1.0, 2]}), ({"a": 1}, {"a": 1})):
        assert admission.make_patch(src, dst) == jsonpatch.make_patch(src, dst).patch


def test_patch_of_added_members_only() -> None:
    src = {"a": {"b": {"x": 1}}, "c": 2}
    for extra in ({"y": 2}, {"y": {"z": [1, 2]}, "w~/": None}, {}):
        dst = copy.deepcopy(src)
        dst["a"]["b"].update(extra)
        ours = admission.make_patch(src, dst)
        assert ours == jsonpatch.make_patch(src, dst).patch
        assert len(ours) == len(extra)
        if extra:
            dst["a"]["b"]["y"] = "later change"
            assert ours[0]["value"] != "later change"  # values are copies


def test_patch_of_a_deep_change_has_the_full_path() -> None:
    src = {"spec": {"devices": {"requests": [{"name": "r", "exactly": {"deviceClassName": "c"}}]}}}
    dst = copy.deepcopy(src)
    dst["spec"]["devices"]["requests"][0]["exactly"]["allocationMode"] = "ExactCount"
    assert admission.make_patch(src, dst) == [
        {"op": "add", "path": "/spec/devices/requests/0/exactly/allocationMode", "value": "ExactCount"}]


# ----------------------------------------------------------------------------------- type checks

SCHEMA_VALUES = st.recursive(
    SCALARS | st.sampled_from(["1Gi", "80Gi", " 5 ", "bogus", "1e3", ""]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(
        ["name", "devices", "attributes", "capacity", "value", "int", "string", "bool", "version", "pool",
         "generation", "driver", "labels", "nodeSelector", "nodeSelectorTerms", "matchExpressions", "values",
         "gpu.example.com/model", "taints", "timeAdded", "counters", "sharedCounters"]), inner, max_size=4),
    max_leaves=20)


@settings(max_examples=400, deadline=None)
@given(st.dictionaries(st.sampled_from(["metadata", "spec", "status"]), SCHEMA_VALUES, max_size=3))
def test_schema_fits_exactly_when_its_error_walk_finds_nothing(obj: dict) -> None:
    for kind, compiled in schema.KIND_SCHEMAS.items():
        assert compiled.fits(obj) == (not schema.type_errors(compiled, obj, Path("x"))), kind
    for spec in (schema.NODE_SELECTOR, schema.DEVICE_TAINT, schema.OBJECT_META):
        for value in obj.values():
            compiled = schema.Schema(spec)
            assert compiled.fits(value) == (not schema.type_errors(compiled, value, Path("x")))


def test_decode_of_a_valid_and_of_a_broken_slice() -> None:
    from benchmarks.bench_admission import slice_64

    good = slice_64()
    assert schema.decode_errors(good, "ResourceSlice") == []
    bad = slice_64()
    bad["spec"]["devices"][5]["capacity"]["gpu.example.com/memory"]["value"] = "lots"
    errors = schema.decode_errors(bad, "ResourceSlice")
    assert [e.field for e in errors] == ["spec.devices[5].capacity[gpu.example.com/memory].value"]


@settings(max_examples=300, deadline=None)
@given(JSON)
def test_json_copy_is_an_equal_independent_copy(value: Any) -> None:
    """copy_json's orjson round trip gives what its walk gives."""
    copied = copy_json(value)
    assert _same_json(copied, jsoncopy._copy_walk(value))
    if isinstance(value, (dict, list)) and value:
        assert copied is not value
        copied.clear()
        assert value  # the original is untouched


def test_json_copy_keeps_what_orjson_would_change() -> None:
    import datetime

    when = datetime.datetime(2024, 1, 2, 3, 4, 5, tzinfo=datetime.UTC)
    value = {"nan": [float("nan")], "inf": float("inf"), "big": 2**80, "when": when, "tuple": (1, 2), 3: "int key",
             "nested": {"x": [1, True, 1.0, None]}}
    copied = copy_json(value)
    assert math.isnan(copied["nan"][0]) and copied["inf"] == float("inf") and copied["big"] == 2**80
    assert copied["when"] is when and copied["tuple"] == (1, 2) and copied[3] == "int key"
    assert _same_json(copied["nested"], value["nested"]) and copied["nested"] is not value["nested"]
