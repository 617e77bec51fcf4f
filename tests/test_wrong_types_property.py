"""Property (issue 10 item 3): a value of the wrong JSON type in any field of any object kind the
tool reads, through every command, is an answer or a one-line error (exit 0, 1 or 2), never an
internal error (exit 70) or a traceback.

Fields are those of the demo cluster's objects plus every field of the loader's type schemas
(:data:`kubectl_dra.state.shapes.LOAD_SCHEMAS`), so fields the demo does not use are covered too.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterator

import pytest
import yaml
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from kubectl_dra.cli.main import main
from kubectl_dra.state import load_documents
from kubectl_dra.state.shapes import LOAD_SCHEMAS

DEMO = str(Path(__file__).resolve().parent.parent / "kubectl_dra" / "demo" / "cluster.yaml")
OBJECTS: list[dict[str, Any]] = load_documents([DEMO])
KINDS = sorted({o["kind"] for o in OBJECTS})
Path_ = tuple[Any, ...]


def _value_paths(value: Any, prefix: Path_ = ()) -> Iterator[Path_]:
    """Every path below ``value`` (keys of mappings, indexes of lists)."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield prefix + (key,)
            yield from _value_paths(item, prefix + (key,))
    elif isinstance(value, list):
        for i, item in enumerate(value[:3]):
            yield prefix + (i,)
            yield from _value_paths(item, prefix + (i,))


def _schema_paths(schema: Any, prefix: Path_ = (), depth: int = 0) -> Iterator[Path_]:
    """Every field path a schema names (``0`` for list items, ``"k"`` for map values)."""
    if depth > 8:
        return
    if isinstance(schema, dict):
        for key, sub in schema.items():
            yield prefix + (key,)
            yield from _schema_paths(sub, prefix + (key,), depth + 1)
    elif isinstance(schema, list):
        yield prefix + (0,)
        yield from _schema_paths(schema[0], prefix + (0,), depth + 1)
    elif isinstance(schema, tuple):
        yield prefix + ("k",)
        yield from _schema_paths(schema[1], prefix + ("k",), depth + 1)


def _paths(index: int) -> list[Path_]:
    obj = OBJECTS[index]
    found = set(_value_paths(obj)) | set(_schema_paths(LOAD_SCHEMAS.get(obj["kind"], {})))
    return sorted(found, key=lambda p: [str(x) for x in p])


PATHS = {i: _paths(i) for i in range(len(OBJECTS))}
WRONG_VALUES = ["x", "", 7, -1, 2.5, True, None, [], [1], ["x"], {}, {"a": 1}, {"a": ["b"]}, [{"a": {}}]]


def _put(obj: dict[str, Any], path: Path_, value: Any) -> None:
    """Set ``path`` to ``value``, creating what is missing (a list index past the end appends)."""
    cur: Any = obj
    for part, nxt in zip(path, path[1:]):
        if isinstance(cur, list):
            if not isinstance(part, int):
                return  # the path crosses a value already replaced by another type
            while len(cur) <= part:
                cur.append([] if isinstance(nxt, int) else {})
            if not isinstance(cur[part], (dict, list)):
                cur[part] = [] if isinstance(nxt, int) else {}
            cur = cur[part]
        elif isinstance(cur, dict):
            if not isinstance(cur.get(part), (dict, list)):
                cur[part] = [] if isinstance(nxt, int) else {}
            cur = cur[part]
        else:
            return
    last = path[-1]
    if isinstance(cur, list) and isinstance(last, int):
        while len(cur) <= last:
            cur.append(None)
        cur[last] = value
    elif isinstance(cur, dict) and not isinstance(last, int):
        cur[last] = value
    elif isinstance(cur, dict):
        cur[str(last)] = value


def _target(obj: dict[str, Any]) -> str:
    meta = obj.get("metadata") or {}
    kind = {"ResourceClaim": "claim", "Pod": "pod", "ResourceClaimTemplate": "template",
            "PodGroup": "podgroup"}.get(obj["kind"] if isinstance(obj.get("kind"), str) else "")
    if kind and isinstance(meta, dict) and isinstance(meta.get("name"), str) and isinstance(meta.get("namespace"), str):
        return f"{kind}/{meta['namespace']}/{meta['name']}"
    return "pod/ml-team/trainer-b"


def _run(capsys: pytest.CaptureFixture[str], argv: list[str]) -> tuple[int, str]:
    with pytest.raises(SystemExit) as info:
        main(argv)
    _, err = capsys.readouterr()
    code = info.value.code
    return (code if isinstance(code, int) else (0 if code is None else 1)), err


@settings(max_examples=60, deadline=None, derandomize=True, phases=[Phase.explicit, Phase.generate],
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(data=st.data())
def test_wrong_typed_fields_never_end_in_an_internal_error(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                           data: st.DataObject) -> None:
    index = data.draw(st.integers(0, len(OBJECTS) - 1), label="object")
    path = data.draw(st.sampled_from(PATHS[index]), label="field")
    value = data.draw(st.sampled_from(WRONG_VALUES), label="value")
    command = data.draw(st.sampled_from(["usage", "preview", "explain", "validate", "preview -f", "explain -f"]),
                        label="command")
    objects = json.loads(json.dumps(OBJECTS))
    changed = objects[index]
    _put(changed, path, value)
    state = tmp_path / "state.yaml"
    state.write_text(yaml.safe_dump_all(objects))
    single = tmp_path / "object.yaml"
    single.write_text(yaml.safe_dump(changed))
    argv = {
        "usage": ["usage", "--state", str(state)],
        "preview": ["preview", _target(changed), "--state", str(state)],
        "explain": ["explain", _target(changed), "--state", str(state)],
        "validate": ["validate", "-f", str(single)],
        "preview -f": ["preview", "-f", str(single), "--state", DEMO],
        "explain -f": ["explain", "-f", str(single), "--state", DEMO],
    }[command]
    code, err = _run(capsys, argv)
    assert code in (0, 1, 2), (command, OBJECTS[index]["kind"], path, value, err)
    assert "internal error" not in err and "Traceback" not in err, (command, OBJECTS[index]["kind"], path, value, err)
