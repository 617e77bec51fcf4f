"""Loading objects from files: every malformed input is one InputError naming the file, the
object and the field — never a Python exception, never a silently empty state."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from kubectl_dra.errors import InputError
from kubectl_dra.state import load_documents, load_state

CLAIM = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
         "metadata": {"name": "c", "namespace": "default"}, "spec": {}}


def put(tmp_path: Path, name: str, content: str | bytes) -> str:
    path = tmp_path / name
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
    return str(path)


@pytest.mark.parametrize(
    ("name", "content", "expected"),
    [
        ("tabs.yaml", "kind: ResourceClaim\nmetadata:\n\tname: x\n", r"line 3, column 1: malformed YAML: .*tabs"),
        ("quote.yaml", 'kind: "ResourceClaim\nmetadata: {}\n', r"malformed YAML"),
        ("trail.json", '{"kind": "ResourceClaim", "metadata": {"name": "x"}} garbage',
         r"line 1, column 54: malformed JSON: Extra data"),
        ("strings.yaml", "- a\n- b\n", r"expected a Kubernetes object .*got a string \('a'\)"),
        ("scalar.yaml", "42\n", r"got a number"),
        ("nokind.yaml", "metadata: {name: x}\n", r"object 'x': kind: Required value"),
        ("kindint.yaml", "kind: 5\nmetadata: {name: x}\n", r"object 'x': kind: must be a string, got a number"),
        ("items.yaml", "kind: List\nitems: 5\n", r"List: items: must be a list, got a number"),
        ("binary.yaml", b"\x00\xd7\xff\xfe garbage", r"not a YAML or JSON text file \(invalid UTF-8 at byte \d+\)"),
    ],
)
def test_malformed_files_name_the_file_and_reason(tmp_path: Path, name: str, content: str | bytes,
                                                  expected: str) -> None:
    path = put(tmp_path, name, content)
    with pytest.raises(InputError, match=expected) as info:
        load_documents([path])
    assert str(info.value).startswith(path + ":")
    assert info.value.exit_code == 2


def test_missing_path_and_directory_without_manifests(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no such file or directory"):
        load_documents([str(tmp_path / "nope.yaml")])
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "README.txt").write_text("hi")
    with pytest.raises(InputError, match=r"d: directory holds no \.yaml, \.yml or \.json files"):
        load_documents([str(tmp_path / "d")])


def test_directories_are_read_recursively_in_sorted_order(tmp_path: Path) -> None:
    (tmp_path / "b").mkdir()
    for path, name in ((tmp_path / "b" / "x.yaml", "second"), (tmp_path / "a.json", "first")):
        path.write_text(json.dumps({**CLAIM, "metadata": {"name": name}}))
    (tmp_path / "skip.txt").write_text("not: read")
    assert [o["metadata"]["name"] for o in load_documents([str(tmp_path)])] == ["first", "second"]


def test_lists_flatten_and_fill_item_kinds(tmp_path: Path) -> None:
    doc = {"apiVersion": "v1", "kind": "ResourceClaimList", "items": [{"metadata": {"name": "a"}}]}
    path = put(tmp_path, "list.yaml", yaml.safe_dump(doc) + "---\n" + yaml.safe_dump(CLAIM) + "---\n")
    objs = load_documents([path])
    assert [(o["kind"], o["metadata"]["name"]) for o in objs] == [("ResourceClaim", "a"), ("ResourceClaim", "c")]


def test_byte_order_mark_is_accepted(tmp_path: Path) -> None:
    path = put(tmp_path, "bom.yaml", b"\xef\xbb\xbf" + yaml.safe_dump(CLAIM).encode())
    assert load_documents([path])[0]["metadata"]["name"] == "c"


def test_empty_state_is_an_error_not_an_empty_cluster(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(InputError, match="empty.yaml: no objects found"):
        load_state([put(tmp_path, "empty.yaml", "---\n")])
    import io
    import sys

    monkeypatch.setattr(sys, "stdin", io.StringIO(""))
    with pytest.raises(InputError, match="<stdin>: no objects found"):
        load_state(["-"])


@pytest.mark.parametrize(
    ("metadata", "expected"),
    [
        (None, r"ResourceClaim without metadata: metadata.name: Required value"),
        ([1, 2], r"ResourceClaim: metadata: must be a mapping, got a list"),
        ({}, r"ResourceClaim without a name: metadata.name: Required value"),
        ({"name": 7}, r"metadata.name: must be a string, got a number"),
        ({"name": "c", "namespace": ["x"]}, r"ResourceClaim/c: metadata.namespace: must be a string"),
    ],
)
def test_state_objects_need_a_name(tmp_path: Path, metadata: object, expected: str) -> None:
    obj = {k: v for k, v in CLAIM.items() if k != "metadata"}
    if metadata is not None:
        obj["metadata"] = metadata
    with pytest.raises(InputError, match=expected):
        load_state([put(tmp_path, "s.yaml", yaml.safe_dump(obj))])


def test_other_kinds_in_state_are_ignored_with_a_warning(tmp_path: Path) -> None:
    path = put(tmp_path, "s.yaml", yaml.safe_dump_all([CLAIM, {"kind": "ConfigMap", "metadata": {"name": "m"}}]))
    state = load_state([path])
    assert [o["metadata"]["name"] for o in state.resource_claims] == ["c"]
    assert state.warnings == ["ignored ConfigMap m: kind not used by kubectl-dra"]


def test_other_kinds_with_odd_metadata_are_still_only_ignored(tmp_path: Path) -> None:
    path = put(tmp_path, "s.yaml", "kind: ConfigMap\nmetadata: [1]\n---\n" + yaml.safe_dump(CLAIM))
    state = load_state([path])
    assert state.warnings == ["ignored ConfigMap ?: kind not used by kubectl-dra"]
    assert len(state.resource_claims) == 1


@pytest.mark.parametrize(
    ("obj", "expected"),
    [
        ({"kind": "ResourceSlice", "metadata": {"name": "s"},
          "spec": {"driver": "d", "pool": {"name": "p", "generation": "one", "resourceSliceCount": 1}}},
         'ResourceSlice/s: spec.pool.generation: Invalid value: "one": must be an integer, not string'),
        ({"kind": "DeviceClass", "metadata": {"name": "gpu"}, "spec": {"selectors": 5}},
         "DeviceClass/gpu: spec.selectors: Invalid value: 5: must be an array, not integer"),
        ({"kind": "ResourceClaim", "metadata": {"name": "c", "namespace": "default"},
          "spec": {"devices": {"requests": [{"name": "r", "exactly": {"deviceClassName": "g", "count": "two"}}]}}},
         'ResourceClaim/c: spec.devices.requests[0].exactly.count: Invalid value: "two": must be an integer'),
    ],
)
def test_state_values_of_the_wrong_type_are_named(tmp_path: Path, obj: dict, expected: str) -> None:
    """The API server never stores such objects; the allocator must not meet them either."""
    path = put(tmp_path, "s.yaml", yaml.safe_dump({"apiVersion": "resource.k8s.io/v1", **obj}))
    with pytest.raises(InputError) as info:
        load_state([path])
    assert str(info.value).startswith(f"{path}: {expected}")


def test_duplicate_keys_are_errors_not_a_silent_last_wins(tmp_path: Path) -> None:
    yaml_path = put(tmp_path, "dup.yaml", "kind: ResourceClaim\nmetadata: {name: x}\nspec:\n  count: 1\n  count: 5\n")
    with pytest.raises(InputError, match=r"dup.yaml: line 5, column 3: duplicate key 'count'"):
        load_documents([yaml_path])
    json_path = put(tmp_path, "dup.json", '{"kind": "ResourceClaim", "metadata": {"name": "x", "name": "y"}}')
    with pytest.raises(InputError, match=r"dup.json: duplicate key 'name' in an object"):
        load_documents([json_path])
    merged = put(tmp_path, "merge.yaml", "base: &b {a: 1}\nkind: X\nmetadata: {name: m}\nother:\n  <<: *b\n  c: 2\n")
    assert load_documents([merged])[0]["other"] == {"a": 1, "c": 2}


def test_reading_is_bounded_whether_the_first_chunk_holds_all_or_not(monkeypatch) -> None:
    """A file read in one piece (its size plus one) and a stream that outgrows its first chunk
    (a growing file, a pipe) give the same bytes, and the same refusal past the limit."""
    import io

    from kubectl_dra.state import files

    data = bytes(range(256)) * 40
    assert files._read_bounded(io.BytesIO(data), "x", first=len(data) + 1) == data
    assert files._read_bounded(io.BytesIO(data), "x", first=100) == data
    assert files._read_bounded(io.BytesIO(data), "x") == data
    assert files._read_bounded(io.BytesIO(b""), "x", first=1) == b""
    monkeypatch.setattr(files, "MAX_INPUT_BYTES", 5000)
    with pytest.raises(InputError, match="larger than"):
        files._read_bounded(io.BytesIO(data), "x", first=100)
    with pytest.raises(InputError, match="larger than"):
        files._read_bounded(io.BytesIO(data), "x", first=len(data) + 1)
