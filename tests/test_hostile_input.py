"""Hostile and odd input (issue 10 items 2, 3, 7; issue 8 item 6): alias bombs, deep nesting,
wrong-typed fields, objects given twice. Every command answers with exit 0/1/2 and a message
naming object and field, never exit 70, a traceback or an exhausted stack or memory."""

from __future__ import annotations

import json
import subprocess
import sys
import tracemalloc
from pathlib import Path
from typing import Any

import pytest
import yaml

from kubectl_dra.errors import InputError
from kubectl_dra.model.jsoncopy import copy_json, dumps_json
from kubectl_dra.state import load_documents, load_state
from kubectl_dra.state.bounded import MAX_DEPTH, load_json
from kubectl_dra.state.yamltext import load_yaml
from tests.cli_support import run

REPO = Path(__file__).resolve().parent.parent
DEMO = str(REPO / "kubectl_dra" / "demo" / "cluster.yaml")
CLAIM_TARGET = "claim/ml-team/trainer-a-gpu"
POD_TARGET = "pod/ml-team/trainer-b"


def demo_objects() -> list[dict[str, Any]]:
    return load_documents([DEMO])


def alias_bomb(levels: int = 10, width: int = 9) -> str:
    """The classic "billion laughs": each level a list of ``width`` aliases of the one before."""
    lines = ['a0: &a0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    for i in range(1, levels):
        lines.append(f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * width) + "]")
    return "\n".join(lines) + "\n"


def claim_with_parameters(parameters: Any, name: str = "deep") -> dict[str, Any]:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
            "metadata": {"name": name, "namespace": "ml-team"},
            "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com"}}],
                                 "config": [{"opaque": {"driver": "gpu.example.com", "parameters": parameters}}]}}}


def nested(depth: int) -> Any:
    """An object nested ``depth`` levels: objects (6 bytes a level) up to 1000, lists (2 bytes) beyond,
    so that it stays within the API server's 10 KiB for opaque parameters."""
    value: Any = {"leaf": 1}
    for _ in range(depth):
        value = {"a": value} if depth <= 1000 else [value]
    return {"p": value}


# --------------------------------------------------------------------------- item 2: bounded input


def test_alias_bomb_is_refused_quickly_in_bounded_memory(tmp_path: Path, capsys) -> None:
    bomb = alias_bomb()
    assert len(bomb.encode()) < 600  # the 529-byte class of bomb from the issue
    claim = ("apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: bomb, namespace: ml-team}\n"
             "spec:\n  devices:\n    requests: [{name: gpu, exactly: {deviceClassName: gpu.example.com}}]\n"
             "    config:\n    - opaque:\n        driver: gpu.example.com\n        parameters:\n"
             + "".join("          " + line + "\n" for line in bomb.splitlines()))
    path = tmp_path / "bomb.yaml"
    path.write_text(claim)
    tracemalloc.start()
    try:
        for argv in (["validate", "-f", str(path)], ["preview", "--state", DEMO, "-f", str(path), "-o", "json"],
                     ["usage", "--state", DEMO, "--state", str(path)]):
            code, out, err = run(capsys, *argv)
            assert code == 2, (argv, err)
            assert "alias" in err and err.count("\n") == 1 and str(path) in err
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 64 * 1024 * 1024  # the expansion never happens


def test_aliases_within_bounds_load_and_share() -> None:
    """Ordinary anchors work; go-yaml's ratio (99 % of small documents, 10 % of big ones) is kept."""
    from kubectl_dra.state.yamltext import _allowed_alias_ratio

    assert load_yaml("a: &x {k: v}\nb: *x\nc: [*x, *x]\n") == [{"a": {"k": "v"}, "b": {"k": "v"}, "c": [{"k": "v"}] * 2}]
    assert [_allowed_alias_ratio(n) for n in (1000, 400_000, 4_000_000, 10**9)] == [0.99, 0.99, 0.10, 0.10]
    assert 0.10 < _allowed_alias_ratio(2_000_000) < 0.99


def test_self_containing_alias_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "loop.yaml"
    path.write_text("kind: Node\nmetadata: &m {name: n, labels: *m}\n")
    with pytest.raises(InputError, match="anchor 'm' value contains itself"):
        load_state([str(path)])


@pytest.mark.parametrize("command", ["validate -f", "usage --state", "preview -f"])
def test_json_nested_100000_deep_is_an_input_error(tmp_path: Path, capsys, command: str) -> None:
    path = tmp_path / "deep.json"
    path.write_text("[" * 100_000 + "]" * 100_000)
    argv = command.split() + [str(path)]
    if command == "preview -f":
        argv += ["--state", DEMO]
    code, _, err = run(capsys, *argv)
    assert code == 2
    assert f"exceeded max depth of {MAX_DEPTH}" in err and "internal error" not in err


def test_deep_yaml_is_an_input_error(tmp_path: Path, capsys) -> None:
    path = tmp_path / "deep.yaml"
    path.write_text("[" * 20_000 + "]" * 20_000)
    code, _, err = run(capsys, "validate", "-f", str(path))
    assert code == 2 and "depth" in err and "internal error" not in err


def test_json_up_to_the_api_servers_depth_loads() -> None:
    """The API server decodes JSON nested up to 10000 levels; so do we (past the recursion limit)."""
    value = load_json("[" * MAX_DEPTH + "]" * MAX_DEPTH)
    depth = 0
    while value:
        value, depth = value[0], depth + 1
    assert depth == MAX_DEPTH - 1
    with pytest.raises(Exception, match="exceeded max depth"):
        load_json("[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1))
    pairs = load_json('{"a": ' * 3000 + '{"x": [1, 2.5, true, null, "s"]}' + "}" * 3000)
    for _ in range(3000):
        pairs = pairs["a"]
    assert pairs == {"x": [1, 2.5, True, None, "s"]}


@pytest.mark.parametrize("depth", [500, 2500])
def test_claim_with_deeply_nested_opaque_parameters_works_everywhere(tmp_path: Path, capsys, depth: int) -> None:
    """The API server accepts opaque parameters nested this deep (within its 10 KiB): so must we."""
    path = tmp_path / "claim.json"
    path.write_text(dumps_json(claim_with_parameters(nested(depth)), separators=(",", ":")))
    assert path.stat().st_size < 10 * 1024 + 300  # opaque parameters: at most 10 KiB
    code, out, err = run(capsys, "validate", "-f", str(path))
    assert (code, out.strip()) == (0, "ResourceClaim/deep: ok"), err
    for output in ("json", "yaml", "table"):
        code, out, err = run(capsys, "preview", "--state", DEMO, "-f", str(path), "-o", output)
        assert code in (0, 1) and "internal error" not in err, err
    code, out, err = run(capsys, "explain", "--state", DEMO, "-f", str(path))
    assert code in (0, 1) and "internal error" not in err, err
    code, out, err = run(capsys, "validate", "-f", str(path), "-o", "json")
    assert code == 0 and load_json(out)["allowed"] is True


def test_iterative_json_helpers_match_the_standard_library() -> None:
    samples: list[Any] = [{"a": [1, {"b": [2.5, True, None, {}], "c": []}, "x\u00e9\""], "d": {}}, [], {}, "s", 5,
                          [[[]]], {"z": 1, "a": 2}]
    for value in samples:
        assert copy_json(value) == value
        for kwargs in ({}, {"indent": 2}, {"indent": 2, "ensure_ascii": False}, {"separators": (",", ":")},
                       {"indent": 2, "sort_keys": True}):
            from kubectl_dra.model.jsoncopy import _dumps_iteratively

            full = {"indent": None, "ensure_ascii": True, "separators": None, "sort_keys": False, **kwargs}
            assert _dumps_iteratively(value, **full) == json.dumps(value, **kwargs)


def test_oversized_input_is_refused_before_reading(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from kubectl_dra.state import files

    monkeypatch.setattr(files, "MAX_INPUT_BYTES", 1000)
    path = tmp_path / "big.yaml"
    path.write_text("kind: Node\nmetadata: {name: n}\n" + "# padding\n" * 200)
    with pytest.raises(InputError, match="larger than"):
        load_state([str(path)])


# --------------------------------------------------------------------------- YAML semantics


@pytest.mark.parametrize("text", [
    "a: 1\nb: [x, 'y', 2.5, 1e3, yes, No, ~, null, 2024-01-02, 0x1f, 0o17, 017, 1_000, .inf, -.nan, '<<', '']\n",
    "base: &b {x: 1, y: 2}\nd:\n  <<: *b\n  y: 3\n",
    "k: !!str 12\nv: !!binary aGk=\nf: !!float 1\ni: !!int '7'\n",
    "a: 1\n---\nb: 2\n...\n---\n",
    "s: |\n  multi\n  line\nt: >\n  folded\n  text\n",
    "=: 1\n",
    "key with spaces: {nested: [1, [2, [3]]]}\n",
])
def test_yaml_values_are_those_of_pyyamls_safe_loader(text: str) -> None:
    """YAML 1.1 as before: the event loader gives exactly PyYAML's safe_load values."""
    expected = list(yaml.safe_load_all(text))
    assert repr(load_yaml(text)) == repr(expected) or load_yaml(text) == expected


def test_duplicate_keys_are_refused_with_their_position(tmp_path: Path) -> None:
    path = tmp_path / "dup.yaml"
    path.write_text("kind: Node\nmetadata:\n  name: a\n  name: b\n")
    with pytest.raises(InputError, match=r"line 4, column 3: duplicate key 'name'"):
        load_state([str(path)])


# --------------------------------------------------------------------------- item 3: wrong types


WRONG_TYPED = [
    ("Node", ["metadata", "labels"], "x", "metadata.labels"),
    ("Node", ["metadata", "labels", "kubernetes.io/hostname"], ["a"], "metadata.labels[kubernetes.io/hostname]"),
    ("Node", ["spec", "taints"], "x", "spec.taints"),
    ("Pod", ["spec", "nodeSelector"], "x", "spec.nodeSelector"),
    ("Pod", ["spec", "affinity"], "x", "spec.affinity"),
    ("Pod", ["status", "resourceClaimStatuses"], "x", "status.resourceClaimStatuses"),
    ("Pod", ["spec", "tolerations"], [5], "spec.tolerations[0]"),
    ("PodGroup", ["spec", "resourceClaims"], {"a": 1}, "spec.resourceClaims"),
    ("ResourceSlice", ["spec", "devices"], "x", "spec.devices"),
    ("DeviceClass", ["spec", "selectors"], [{"cel": "x"}], "spec.selectors[0].cel"),
    ("ResourceClaim", ["spec", "devices", "requests"], {"x": 1}, "spec.devices.requests"),
]


def _set(obj: dict[str, Any], path: list[str], value: Any) -> None:
    for part in path[:-1]:
        obj = obj.setdefault(part, {})
    obj[path[-1]] = value


@pytest.mark.parametrize(("kind", "path", "value", "shown"), WRONG_TYPED, ids=[".".join(w[1]) + f"@{w[0]}" for w in WRONG_TYPED])
def test_wrong_typed_fields_name_object_and_field(tmp_path: Path, capsys, kind: str, path: list[str], value: Any,
                                                  shown: str) -> None:
    objects = demo_objects()
    target = next(o for o in objects if o["kind"] == kind)
    _set(target, path, value)
    state = tmp_path / "state.yaml"
    state.write_text(yaml.safe_dump_all(objects))
    name = target["metadata"]["name"]
    for argv in (["usage"], ["preview", POD_TARGET], ["explain", CLAIM_TARGET]):
        code, _, err = run(capsys, *argv, "--state", str(state))
        assert code == 2, (argv, err)
        assert f"{kind}/{name}: {shown}" in err and "internal error" not in err


# --------------------------------------------------------------------------- issue 8 item 6: one copy


def test_objects_given_twice_are_loaded_once(tmp_path: Path, capsys) -> None:
    dump_dir = tmp_path / "dump"
    dump_dir.mkdir()
    (dump_dir / "all.yaml").write_text(Path(DEMO).read_text())
    twice_in_one = tmp_path / "twice.yaml"
    twice_in_one.write_text(Path(DEMO).read_text() + "\n---\n" + Path(DEMO).read_text())
    once = load_state([DEMO])
    for paths in ([DEMO, str(dump_dir)], [str(twice_in_one)]):
        state = load_state(paths)
        assert [len(state.objects(k)) for k in ("Node", "ResourceSlice", "ResourceClaim", "Pod")] == \
            [len(once.objects(k)) for k in ("Node", "ResourceSlice", "ResourceClaim", "Pod")]
        assert not state.warnings or all("more than once" not in w for w in state.warnings)
        for argv in (["usage"], ["usage", "-o", "json"], ["preview", CLAIM_TARGET], ["explain", CLAIM_TARGET]):
            single = run(capsys, *argv, "--state", DEMO)
            double = run(capsys, *argv, *sum((["--state", p] for p in paths), []))
            assert double == single, argv


def test_a_differing_copy_wins_with_a_warning_naming_it(tmp_path: Path, capsys) -> None:
    objects = demo_objects()
    node = next(o for o in objects if o["kind"] == "Node")
    changed = json.loads(json.dumps(node))
    changed["metadata"].setdefault("labels", {})["extra"] = "yes"
    later = tmp_path / "later.yaml"
    later.write_text(yaml.safe_dump(changed))
    state = load_state([DEMO, str(later)])
    kept = [n for n in state.nodes if n["metadata"]["name"] == node["metadata"]["name"]]
    assert kept == [changed]
    assert any(f"Node {node['metadata']['name']} is given more than once" in w and str(later) in w
               for w in state.warnings)
    code, _, err = run(capsys, "usage", "--state", DEMO, "--state", str(later))
    assert code == 0 and f"warning: Node {node['metadata']['name']} is given more than once" in err


# --------------------------------------------------------------------------- item 7: smaller items


def test_percentages_round_as_people_do() -> None:
    from fractions import Fraction

    from kubectl_dra.usage import percent

    assert [percent(Fraction(a), Fraction(b)) for a, b in [(1, 6), (0, 6), (6, 6), (1, 3), (2, 3), (1, 200),
                                                          (199, 200)]] == [17, 0, 100, 33, 67, 1, 99]


def test_usage_node_accepts_the_rows_the_table_shows(capsys) -> None:
    code, out, _ = run(capsys, "usage", "--state", DEMO)
    assert "<node-selector>" in out
    code, out, err = run(capsys, "usage", "--state", DEMO, "--node", "<node-selector>")
    assert code == 0 and "<node-selector>" in out and "not found" not in err


def test_empty_kubernetes_version_is_an_error(capsys) -> None:
    code, _, err = run(capsys, "usage", "--state", DEMO, "--kubernetes-version", "")
    assert code == 2 and "--kubernetes-version: empty value" in err


def test_metadata_dir_skips_binary_files(tmp_path: Path, capsys) -> None:
    import shutil

    shutil.copytree(REPO / "examples" / "metadata", tmp_path / "md")
    (tmp_path / "md" / "aaa.bin").write_bytes(b"\x89PNG\xff\xfe")
    code, out, err = run(capsys, "metadata", "--dir", str(tmp_path / "md"))
    assert code == 0 and "warning: skipped" in err and "aaa.bin" in err and "claim/" in out


def test_kubectl_exec_errors_quote_the_meaningful_line() -> None:
    from kubectl_dra.state.container import _first_line

    assert _first_line("<html>\n<head><title>502 Bad Gateway</title></head>\n</html>\n") == "502 Bad Gateway"
    assert _first_line('Defaulted container "x"\nError from server (NotFound): pods "p" not found\n') == \
        'Error from server (NotFound): pods "p" not found'


@pytest.mark.slow
def test_closed_stdout_is_not_invalid(tmp_path: Path) -> None:
    """``validate | head`` on a valid file: no traceback, and not exit 1 (which means invalid)."""
    many = tmp_path / "many.yaml"
    objects = demo_objects()
    many.write_text(yaml.safe_dump_all(objects * 1) + "".join(
        f"---\napiVersion: v1\nkind: Namespace\nmetadata: {{name: ns-{i}}}\n" for i in range(5000)))
    script = f"'{sys.executable}' -m kubectl_dra validate -f '{many}' | head -n 1; echo \"rc=${{PIPESTATUS[0]}}\""
    done = subprocess.run(["bash", "-c", script], capture_output=True, text=True, timeout=300)
    assert "Traceback" not in done.stderr and "BrokenPipe" not in done.stderr
    assert done.stdout.strip().splitlines()[-1] in ("rc=0", "rc=141")


def test_validate_output_name_is_kubectls(tmp_path: Path, capsys) -> None:
    objects = demo_objects()
    claim = next(o for o in objects if o["kind"] == "ResourceClaim")
    bad = json.loads(json.dumps(claim))
    bad["metadata"]["name"] = "Not_Valid"
    path = tmp_path / "claims.yaml"
    path.write_text(yaml.safe_dump_all([claim, bad]))
    code, out, err = run(capsys, "validate", "-f", str(path), "-o", "name")
    assert code == 1
    assert out.splitlines() == [f"resourceclaim.resource.k8s.io/{claim['metadata']['name']}"]
    assert "ResourceClaim/Not_Valid: metadata.name" in err
