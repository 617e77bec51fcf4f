"""The rapidyaml fast path for big YAML texts (issue 10 item 6) gives exactly the event builder's
values, or declines and leaves the text (and its errors) to the builder.

The property test renders generated Kubernetes-like documents (tricky plain scalars, quoted
strings with escapes, block and flow styles, block scalars, comments, several documents,
duplicate and typed keys) and compares :func:`load_yaml` with the fast path forced on against
the builder alone: same values (compared by ``repr``, so ``1``/``1.0``/``True`` differ) or the
same error. Examples are derandomized like the other property tests (see
tests/test_allocator_properties.py); ``DRA_PROPERTIES_SCALE=N`` runs N times as many.
"""

from __future__ import annotations

import os
import threading
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator
from unittest import mock

import pytest
import yaml
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from benchmarks import synthetic
from kubectl_dra.state import fastyaml, yamltext
from kubectl_dra.state import settings as loader_settings
from kubectl_dra.state.bounded import DecodeError
from kubectl_dra.state.yamltext import load_yaml
from tests.cli_support import run

EXPLORE = os.environ.get("DRA_PROPERTIES_EXPLORE") == "1" and not os.environ.get("CI")
SCALE = max(1, int(os.environ.get("DRA_PROPERTIES_SCALE") or "1"))
BASE = settings(deadline=None, derandomize=not EXPLORE, database=None, print_blob=True,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much])


def builder(text: str) -> tuple[str, Any]:
    """What the event builder alone makes of ``text``: ("ok", repr of the documents) or ("error", ...)."""
    try:
        return "ok", repr(list(yamltext._Builder().documents(text)))
    except (DecodeError, yaml.YAMLError) as exc:
        return "error", (type(exc).__name__, str(exc))


@pytest.fixture(autouse=True)
def native_parser_allowed(monkeypatch: pytest.MonkeyPatch) -> None:
    """This module tests the fast path: allowed here as the CLI's process settings allow it."""
    monkeypatch.setattr(loader_settings, "native_yaml_parser", True)


def test_the_fast_path_waits_for_the_entry_points_permission(monkeypatch: pytest.MonkeyPatch) -> None:
    """Muting standard error is a process-wide act: without the entry point's permission the
    fast path declines and the builder loads (the same values)."""
    text = "a: 1\nb: two\n"
    monkeypatch.setattr(loader_settings, "native_yaml_parser", False)
    assert fast(text) is None
    monkeypatch.setattr(loader_settings, "native_yaml_parser", True)
    assert fast(text) == [{"a": 1, "b": "two"}]


@contextmanager
def fast_path_for_every_size() -> Iterator[None]:
    """load_yaml with the fast path tried on any text (it normally starts at FAST_PATH_MIN_CHARS)."""
    with mock.patch.object(yamltext, "FAST_PATH_MIN_CHARS", 0), \
            mock.patch.object(fastyaml, "_single_threaded", lambda: True):
        yield


def loader(text: str) -> tuple[str, Any]:
    """What load_yaml makes of ``text`` with the fast path forced on, in the builder's terms."""
    with fast_path_for_every_size():
        try:
            return "ok", repr(load_yaml(text))
        except (DecodeError, yaml.YAMLError) as exc:
            return "error", (type(exc).__name__, str(exc))


def fast(text: str) -> list[Any] | None:
    with mock.patch.object(fastyaml, "_single_threaded", lambda: True):
        return fastyaml.load_fast(text)


# --------------------------------------------------------------------------- generated documents

#: plain scalars YAML 1.1 types (other than as JSON does), and those rapidyaml's JSON rewrites
TYPED_PLAIN = [
    "yes", "Yes", "NO", "no", "on", "On", "off", "OFF", "True", "TRUE", "False", "~", "Null", "NULL", "+1", "017",
    "0o17", "0x1f", "0b101", "1_000", "1:30", "-1:30:00", ".5", "-.5", "1e3", "1E3", "1.5e3", "1.0E-3", "1_0.5",
    ".inf", "-.Inf", "+.INF", ".NaN", ".nan", "inf", "-inf", "nan", "NaN", "infinity", "2001-12-14", "2001-1-1",
    "2001-12-14t21:59:43.10-05:00", "2001-12-14T21:59:43Z", "<<",
]
#: plain scalars both read alike: JSON's own literals and numbers, and strings that look close to typed ones
PLAIN = [
    "y", "n", "Y", "true", "false", "null", "0", "1", "-0", "17", "1.5", "1.", "-2.", "0.0", "-0.0", "1.5e+3",
    "12345678901234567890", "-9", "=", "80Gi", "1.2.3", "v1", "gpu.example.com", "node-00000", "a b", "x:y",
    "http://example.com/a", "-x", "a#b", "~x", "Yes!", "0.1.2", "1-2", "2001-12-14x", "0X1F", "model-a",
    "kubernetes.io/hostname", "a  b", "x - y", "a & b", "a * b", "a ! b", "a ? b", "100%", "é", "日本",
]
#: pieces of double-quoted strings: escapes both parsers decode alike, and (rarer) those the fast path declines
ESCAPES = ["a", " ", "yes", "1", "\\n", "\\t", '\\"', "\\\\", "\\u00e9", "\\N", "\\_", "\\L", "é", "'", ": ", "#"]
ODD_ESCAPES = ["\\x41", "\\/", "\\0", "\\e", "\\ud83d", "\\U0001F600", "\\q", "\\a"]
KEYS = ["name", "labels", "spec", "devices", "value", "count", "a b", "x-y", "=", "driver", "pool", "attributes",
        "kubernetes.io/hostname", "n", "Yes!", "1.2.3"]
TYPED_KEYS = ["1", "yes", "null", "on", "<<", "", "1.5", "~", "True", "2001-12-14", "inf", "name"]


def mostly(usual: st.SearchStrategy[Any], rare: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """``usual`` about eleven times in twelve: most documents then hold nothing the fast path declines."""
    return st.sampled_from(range(12)).flatmap(lambda draw: rare if draw == 11 else usual)


plain_scalars = mostly(st.sampled_from(PLAIN) | st.from_regex(r"[a-z][a-z0-9.\-/]{0,12}", fullmatch=True),
                       st.sampled_from(TYPED_PLAIN))


def single_quoted(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


scalars = st.one_of(
    plain_scalars.map(lambda text: ("plain", text)),
    mostly(st.sampled_from(PLAIN + TYPED_PLAIN), st.text(max_size=8)).map(lambda text: ("raw", single_quoted(text))),
    st.lists(mostly(st.sampled_from(ESCAPES), st.sampled_from(ODD_ESCAPES)), max_size=5)
    .map(lambda parts: ("raw", '"' + "".join(parts) + '"')),
    st.lists(mostly(st.sampled_from(["line", "  indented", "", "yes", "a: b", "# not a comment"]),
                    st.just("&a *b")), min_size=1, max_size=4).map(lambda lines: ("block", lines)),
    st.tuples(plain_scalars, plain_scalars).map(lambda pair: ("folded", pair)),
)
key_texts = mostly(st.sampled_from(KEYS), st.sampled_from(TYPED_KEYS))
keys = st.one_of(key_texts.map(lambda key: ("plain", key)), key_texts.map(lambda key: ("raw", single_quoted(key))),
                 key_texts.map(lambda key: ("raw", '"' + key + '"')))


def collections(children: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    flow = st.booleans()
    return st.one_of(
        st.tuples(st.just("map"), st.lists(st.tuples(keys, children), max_size=4), flow),
        st.tuples(st.just("seq"), st.lists(children, max_size=4), flow),
    )


nodes = st.recursive(scalars, collections, max_leaves=12)
comments = mostly(st.sampled_from(["", " # a comment", " #yes"]), st.just("  # - &a *b !c"))


def flow_text(node: Any) -> str:
    """A node in flow style (plain scalars as they are: some make the text invalid, which is fine)."""
    kind = node[0]
    if kind == "map":
        return "{" + ", ".join(f"{key[1]}: {flow_text(value)}" for key, value in node[1]) + "}"
    if kind == "seq":
        return "[" + ", ".join(flow_text(item) for item in node[1]) + "]"
    if kind in ("block", "folded"):
        return '"' + "\\n".join(node[1]) + '"' if kind == "block" else node[1][0]
    return node[1]


def block_lines(node: Any, indent: int, comment: str) -> list[str]:
    """A collection in block style, one line per entry (nested entries indented by two)."""
    pad = " " * indent
    kind = node[0]
    if kind in ("map", "seq") and (node[2] or not node[1]):
        return [pad + flow_text(node) + comment]
    lines: list[str] = []
    entries = node[1] if kind == "map" else [(None, item) for item in node[1]]
    for key, value in entries:
        lead = f"{key[1]}:" if key is not None else "-"
        lines.extend(entry_lines(pad + lead, value, indent, comment))
    return lines


def entry_lines(lead: str, value: Any, indent: int, comment: str) -> list[str]:
    """One mapping entry or list item: ``lead`` then the value inline, as a block scalar or nested."""
    kind = value[0]
    if kind == "block":
        return [lead + " |" + comment] + [(" " * (indent + 2) + line) if line else "" for line in value[1]]
    if kind == "folded":
        return [lead + " " + value[1][0], " " * (indent + 2) + value[1][1] + comment]
    if kind in ("map", "seq") and not value[2] and value[1]:
        return [lead + comment] + block_lines(value, indent + 2, comment)
    if kind in ("map", "seq"):
        return [lead + " " + flow_text(value) + comment]
    return [lead + " " + value[1] + comment]


def document_text(node: Any, comment: str) -> str:
    if node[0] in ("map", "seq"):
        return "\n".join(block_lines(node, 0, comment)) + "\n"
    return flow_text(node) + "\n"


@st.composite
def yaml_texts(draw: st.DrawFn) -> str:
    """One to three documents; Kubernetes-like objects (with generated fields) or any node."""
    documents = []
    for _ in range(draw(st.integers(1, 3))):
        comment = draw(comments)
        if draw(st.booleans()):
            fields = draw(st.lists(st.tuples(keys, nodes), max_size=4))
            obj = ("map", [(("plain", "apiVersion"), ("plain", "resource.k8s.io/v1")),
                           (("plain", "kind"), ("plain", "ResourceSlice")),
                           (("plain", "metadata"), ("map", [(("plain", "name"), draw(scalars))], draw(st.booleans())))]
                   + fields, False)
        else:
            obj = draw(nodes)
        documents.append(document_text(obj, comment))
    separator = draw(st.sampled_from(["---\n", "...\n---\n", "--- # next\n"]))
    lead = draw(st.sampled_from(["", "---\n", "# header\n"]))
    return lead + separator.join(documents)


@settings(BASE, max_examples=600 * SCALE)
@given(yaml_texts())
def test_loader_gives_the_builders_values_or_error(text: str) -> None:
    taken = fast(text) is not None
    event("fast path taken" if taken else "declined")
    assert loader(text) == builder(text)


#: what an edit inserts: indicators, quotes, blanks, line breaks and the markers of documents
INSERTIONS = list(" :-?[]{},#'\"\n.&*!|>%@`\\~0") + ["...", "---", ": ", "- ", "\n  ", "\n- ", " #", "\t"]


@st.composite
def edited_yaml_texts(draw: st.DrawFn) -> str:
    """A generated text with one to three characters inserted or deleted (often no longer valid)."""
    text = draw(yaml_texts())
    for _ in range(draw(st.integers(1, 3))):
        at = draw(st.integers(0, len(text)))
        if draw(st.booleans()) and at < len(text):
            text = text[:at] + text[at + 1:]
        else:
            text = text[:at] + draw(st.sampled_from(INSERTIONS)) + text[at:]
    return text


@settings(BASE, max_examples=600 * SCALE)
@given(edited_yaml_texts())
def test_edited_texts_give_the_builders_values_or_error(text: str) -> None:
    """Where libyaml refuses a text, the fast path must not read it: the builder's error comes."""
    event("fast path taken" if fast(text) is not None else "declined")
    assert loader(text) == builder(text)


# --------------------------------------------------------------------------- the fast path is taken


def kubectl_dump(nodes: int) -> str:
    """What ``kubectl get -o yaml`` writes for a small synthetic cluster, with kubectl's own touches."""
    objs = synthetic.cluster(nodes, 4, in_use=0.5)
    for obj in objs:
        metadata = obj.setdefault("metadata", {})
        metadata.update({"creationTimestamp": "2026-12-02T01:02:03Z", "resourceVersion": "12345",
                         "uid": "0b0c5b5e-9a54-4f0e-8f8e-2d1c5f0e7a11", "generation": 1})
        metadata.setdefault("annotations", {})["kubectl.kubernetes.io/last-applied-configuration"] = (
            '{"apiVersion":"v1","kind":"Node","metadata":{"labels":{"on":"yes"}},"spec":{"unschedulable":false}}\n')
        metadata.setdefault("labels", {}).update({"node-role.kubernetes.io/control-plane": "", "enabled": "true",
                                                  "answer": "yes", "zone-number": "017"})
    return yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": objs, "metadata": {"resourceVersion": ""}},
                          sort_keys=True, width=80)


def test_a_kubectl_style_dump_takes_the_fast_path_and_matches_the_builder() -> None:
    text = kubectl_dump(12)
    assert fastyaml.decline_reason(text) is None
    documents = fast(text)
    assert documents is not None and repr(documents) == builder(text)[1]
    assert documents[0]["items"][0]["metadata"]["creationTimestamp"] == "2026-12-02T01:02:03Z"


def test_load_yaml_takes_the_fast_path_for_big_texts_only(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[int] = []
    real = yamltext.load_fast
    monkeypatch.setattr(yamltext, "load_fast", lambda text: calls.append(len(text)) or real(text))
    small = "a: 1\n"
    assert load_yaml(small) == [{"a": 1}] and calls == []
    big = kubectl_dump(40)
    assert len(big) >= yamltext.FAST_PATH_MIN_CHARS
    assert repr(load_yaml(big)) == builder(big)[1] and calls == [len(big)]


def test_the_builder_loads_what_the_fast_path_declines(monkeypatch: pytest.MonkeyPatch) -> None:
    """Where the fast path is not allowed (or declines) the same values come, more slowly."""
    monkeypatch.setattr(yamltext, "FAST_PATH_MIN_CHARS", 0)
    monkeypatch.setattr(loader_settings, "native_yaml_parser", False)
    text = kubectl_dump(3)
    assert repr(load_yaml(text)) == builder(text)[1]


# --------------------------------------------------------------------------- each reason to decline


DECLINED_BEFORE_PARSING = {
    "anchor": "a: &x 1\nb: 2\n",
    "alias": "a: 1\nb: *x\n",
    "tag": "a: !!str 1\n",
    "local tag": "- !thing x\n",
    "directive": "%YAML 1.1\n---\na: 1\n",
    "explicit key": "? a\n: 1\n",
    "reserved @": "a: @x\n",
    "reserved backtick": "a: `x`\n",
    "anchor in flow": "a: [1, &x 2]\n",
    "anchor after JSON-like key": 'a: {"k":&x 2}\n',
    "anchor after a long indentation": "a:\n" + " " * 300 + "&x b: 1\n",
    "deep block nesting (rapidyaml 0.15.2 crashes emitting it)": "".join(" " * i + "a:\n" for i in range(600)),
    "deep compact sequences": "- " * 40 + "x\n",
    "tab": "a:\t1\n",
    "carriage return": "a: 1\r\nb: 2\r\n",
    "byte order mark": "\ufeffa: 1\n",
    "next line (NEL)": "a: x\x85y\n",
    "line separator": "a: x\u2028y\n",
    "control character": "a: x\x07y\n",
    "unknown escape": 'a: "\\q"\n',
    "NUL escape": 'a: "\\0"\n',
    "hex escape": 'a: "\\x41"\n',
    "surrogate escape": 'a: "\\ud83d\\ude00"\n',
    "long unicode escape": 'a: "\\U0001F600"\n',
    "escaped line break": 'a: "x\\\n  y"\n',
    "YAML 1.1 bool": "a: yes\n",
    "YAML 1.1 null": "a: ~\n",
    "octal": "a: 017\n",
    "hex": "a: 0x1f\n",
    "underscores": "a: 1_000\n",
    "sexagesimal": "a: 1:30\n",
    "plus sign": "a: +1\n",
    "timestamp": "a: 2001-12-14\n",
    "timestamp folded over two lines": "a: 2001-1-1\n  10:00:00\n",
    "float .inf": "a: .inf\n",
    "float .5": "a: .5\n",
    "word rapidyaml rewrites": "a: inf\n",
    "nan rapidyaml rewrites": "a: nan\n",
    "signed number with a leading dot (a string in YAML 1.1, -0.5 to rapidyaml)": "-.5\n",
    "merge key": "b: {x: 1}\nc:\n  <<: {y: 2}\n",
    "key before a spaced colon": "1 : x\n",
    "typed key": "True: 1\n",
    "integer key": "1: x\n",
    "null key": "null: x\n",
    "float key written in JSON's way": "1.5: x\n",
    "typed plain value in a JSON-like flow mapping": 'a: {"k":yes}\n',
    "plain scalar starting with ':' in flow": "a: [:x]\n",
    "plain scalar ending with ':' in flow": "a: {x:}\n",
    "plain scalar starting with ']'": "- ]x\n",
    "plain scalar starting with ','": "a: ,x\n",
    "tag after a closing bracket": "{}!\n",
    "document end marker": "a: x\n...\n---\nb: y\n",
    "document end marker then no start": "a: x\n...\nb: y\n",
    "implicit key folded across lines in a flow mapping": "a: {b: 'y', c: y, n\n  ame: 'y'}\n",
    "flow sequence across lines": "a: [1,\n  2]\n",
    "quoted scalar left open in a flow sequence": 'a: ["x\n  y"]\n',
    "nesting deeper than rapidyaml emits": "a: " + "[" * 80 + "]" * 80 + "\n",
    "flow styles": "a: {b: [1, {c: d}], e: []}\nf: {}\n",
    "comments": "# top\na: 1 # one\n# between\nb: [1, 2] # two\n",
    "only a comment": "# nothing\n",
    "block scalar header with a space before its indicator": "- | -# a comment\n  line\n",
    "flow mapping closed only inside a comment": "a: {n #ame: 'y'} #yes\n",
    "multi-line quoted key before a flow sequence": '"multi\n line": [x,\n  y]\n',
}


DECLINED_AFTER_PARSING = {
    "duplicate key": "a: 1\na: 2\n",
    "duplicate quoted key": '"a": 1\n\'a\': 2\n',
    "duplicate key in a later document": "a: 1\n---\nb: 1\nb: 2\n",
    "exponent YAML 1.1 reads as a string": "a: 1e3\n",
    "exponent without a sign": "a: 1.5e3\n",
    "syntax error": "a: 'unclosed\n",
    "bad indentation": "a:\n  - x\nb: 1\n  c: 2\n",
    "mapping in a plain scalar": "a: b: c\n",
    "integer beyond 64 bits (orjson cannot write it back to prove no key was dropped)": "a: 12345678901234567890123\n",
}


#: why the fast path declines -> (text, whether the scan of the text already declines it)
DECLINED = {**{name: (text, True) for name, text in DECLINED_BEFORE_PARSING.items()},
            **{name: (text, False) for name, text in DECLINED_AFTER_PARSING.items()}}


@pytest.mark.parametrize("text,before_parsing", DECLINED.values(), ids=DECLINED.keys())
def test_declines(text: str, before_parsing: bool) -> None:
    """Declined by the scan or while decoding (as the table says); the builder's answer either way."""
    assert (fastyaml.decline_reason(text) is not None) is before_parsing
    assert fast(text) is None
    assert loader(text) == builder(text)


TAKEN = {
    "bools and null JSON writes alike": "a: true\nb: false\nc: null\nd:\n",
    "decimal numbers": "a: 0\nb: -0\nc: 17\nd: 1.5\ne: 1.\nf: -0.0\ng: 1.5e+3\nh: 9223372036854775807\n",
    "quoted keys, typed only if they were plain": "'': x\n'1': y\n\"null\": z\n",
    "string holding a quote, colon and space": 'a: "x\\": y"\n',
    "string holding colons": 'a: "k: v, \\"q\\": w"\nb: \'x: y\'\n',
    "quoted look-alikes": "a: 'yes'\nb: \"017\"\nc: '2001-12-14'\nd: \"~\"\ne: ''\nf: '<<'\n",
    "escapes": 'a: "\\u00e9\\N\\_\\L\\P \\" \\\\ \\t \\n"\n',
    "plain scalars with indicators inside": "a: x & y\nb: a * b\nc: is it? sure\nd: 50 %\ne: -x\nf: a#b\n",
    "CEL with && and !=": 'cel: device.driver == "x" && device.attributes["x"].model != "y"\n',
    "block scalars": "a: |\n  x\n   y\nb: >-\n  folded\n  text\n\nc: |+\n  keep\n\n",
    "folded plain scalar": "a: x\n  y\n\n  z\n",
    "several documents": "a: 1\n---\n- x\n--- 5\n---\n",
    "value tag '='": "=: 1\n",
    "empty flow collections, as kubectl writes them": "a: []\nb: {}\nc:\n- []\n",
    "empty stream": "",
}


@pytest.mark.parametrize("text", TAKEN.values(), ids=TAKEN.keys())
def test_fast_path_takes_plain_kubernetes_yaml(text: str) -> None:
    documents = fast(text)
    assert documents is not None
    assert repr(documents) == builder(text)[1]


def test_the_fast_path_needs_a_single_threaded_process() -> None:
    """rapidyaml prints its errors on file descriptor 2, which is muted meanwhile: never with other threads."""
    stop = threading.Event()
    other = threading.Thread(target=stop.wait)
    other.start()
    try:
        assert fastyaml.load_fast("a: 1\n") is None
    finally:
        stop.set()
        other.join()


def test_rapidyaml_errors_print_nothing(capfd: pytest.CaptureFixture[str]) -> None:
    assert fast("a: [1, 2\n") is None
    assert fast("a: b: c\n") is None
    out, err = capfd.readouterr()
    assert (out, err) == ("", "")


# --------------------------------------------------------------------------- through the command line


@pytest.mark.parametrize(("tail", "message", "below"), [
    ("broken: [1, 2\n", "malformed YAML", 1),  # libyaml finds the list unclosed at the end
    ("apiVersion: again\n", "duplicate key 'apiVersion'", 0),
    ("alias: *nowhere\n", "unknown anchor 'nowhere'", 0),
])
def test_big_bad_files_give_the_builders_one_line_error(tmp_path: Path, capfd: pytest.CaptureFixture[str],
                                                        tail: str, message: str, below: int) -> None:
    """Errors in big files come from the builder, with line and column, and nothing from rapidyaml."""
    text = kubectl_dump(40) + tail
    assert len(text) >= yamltext.FAST_PATH_MIN_CHARS
    path = tmp_path / "dump.yaml"
    path.write_text(text)
    code, out, err = run(capfd, "usage", "--state", str(path))
    line = text.count("\n") + below
    assert code == 2 and out == "" and err.count("\n") == 1, err
    assert message in err and f"{path}: line {line}, column" in err, err


def test_a_big_dump_gives_the_same_usage_as_its_json(tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    objs = synthetic.cluster(30, 8, in_use=0.25)
    yaml_path = synthetic.write_yaml(objs, tmp_path / "dump.yaml")
    json_path = synthetic.write_json(objs, tmp_path / "dump.json")
    assert yaml_path.stat().st_size >= yamltext.FAST_PATH_MIN_CHARS
    assert fastyaml.decline_reason(yaml_path.read_text()) is None
    outputs = [run(capfd, "usage", "--state", str(path), "-o", "json") for path in (yaml_path, json_path)]
    assert outputs[0] == outputs[1] and outputs[0][0] == 0
