"""Every reader of feature gates refuses a name outside the gate table the same way (a
FeatureGateError, exit 2 at the CLI), instead of reading it as on or off; and every gate
that validation, usage and the allocator read is a row of that table (issue 9 item 5)."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Callable

import pytest

from kubectl_dra.errors import FeatureGateError
from kubectl_dra.gates import ALPHA, DEPENDENCIES, DRA_GATES, PRE_ALPHA, FeatureGates, Gate, known_gate
from kubectl_dra.validation import gating

ROOT = Path(__file__).resolve().parent.parent


class StandIn:
    """A duck-typed gate set that answers anything (what validation's tests pass)."""

    def enabled(self, name: str) -> bool:
        return True


DEFAULT = FeatureGates.default()

READERS: dict[str, Callable[[str], object]] = {
    "FeatureGates.enabled": DEFAULT.enabled,
    "FeatureGates[]": DEFAULT.__getitem__,
    "FeatureGates.stage": DEFAULT.stage,
    "FeatureGates.default_of": DEFAULT.default_of,
    "FeatureGates.locked": DEFAULT.locked,
    "FeatureGates.introduced_in": DEFAULT.introduced_in,
    "FeatureGates.only": lambda name: FeatureGates.only([name]),
    "FeatureGates.with_overrides(str)": lambda name: DEFAULT.with_overrides(f"{name}=true"),
    "FeatureGates.with_overrides(map)": lambda name: DEFAULT.with_overrides({name: True}),
    "known_gate": known_gate,
    "validation gate_enabled(FeatureGates)": lambda name: gating.gate_enabled(DEFAULT, name),  # type: ignore[arg-type]
    "validation gate_enabled(stand-in)": lambda name: gating.gate_enabled(StandIn(), name),  # type: ignore[arg-type]
    "validation gate_enabled(None)": lambda name: gating.gate_enabled(None, name),  # type: ignore[arg-type]
}


#: names outside the table (AllAlpha is one too, except as a --feature-gates key)
UNKNOWN = ["DRANoSuchGate", "DRAResourcePoolStatuss", "AllAlpha", ""]


@pytest.mark.parametrize("reader,name", [
    (reader, name) for reader in sorted(READERS) for name in UNKNOWN
    if not (name == "AllAlpha" and reader.startswith("FeatureGates.with_overrides"))
])
def test_an_unknown_gate_name_is_refused_by_every_reader(reader: str, name: str) -> None:
    with pytest.raises(FeatureGateError, match="unrecognized feature gate"):
        READERS[reader](name)


@pytest.mark.parametrize("reader", sorted(READERS))
def test_every_reader_answers_for_every_gate_of_the_table(reader: str) -> None:
    """Every gate of the table is answered (no FeatureGateError), the same for the Gate member
    as for its plain name (as --feature-gates and scenario files give it)."""
    for gate in Gate:
        if reader.startswith("FeatureGates.with_overrides") and DEFAULT.stage(gate) == PRE_ALPHA:
            continue
        by_member, by_name = READERS[reader](gate), READERS[reader](gate.value)
        assert by_member is not None
        assert by_member == by_name, (gate, by_member, by_name)


def test_the_resource_pool_status_gates_are_in_the_table() -> None:
    """KEP-5677: DRAResourcePoolStatus alpha from 1.36, DRAPartitionableDevicesType alpha from
    1.37, both off by default; validation reads them for spec.partitionTypeAttribute."""
    for release, stage in (("1.35", PRE_ALPHA), ("1.36", ALPHA), ("1.37", ALPHA)):
        gates = FeatureGates.for_version(release)
        assert gates.stage(Gate.RESOURCE_POOL_STATUS) == stage
        assert gates.enabled(Gate.RESOURCE_POOL_STATUS) is False
    assert FeatureGates.for_version("1.36").stage(Gate.PARTITIONABLE_DEVICES_TYPE) == PRE_ALPHA
    assert FeatureGates.default().stage(Gate.PARTITIONABLE_DEVICES_TYPE) == ALPHA
    assert set(DEPENDENCIES[Gate.PARTITIONABLE_DEVICES_TYPE]) == {Gate.PARTITIONABLE_DEVICES, Gate.RESOURCE_POOL_STATUS}
    alpha = FeatureGates.default().with_overrides("AllAlpha=true")
    assert alpha.enabled(Gate.RESOURCE_POOL_STATUS) and alpha.enabled(Gate.PARTITIONABLE_DEVICES_TYPE)
    assert alpha.unmet_dependencies() == []


def test_gate_names_are_plain_strings_where_they_are_shown() -> None:
    """JSON, YAML and flags show names: DRA_GATES and as_dict() hold plain str, not enum members."""
    assert all(type(name) is str for name in DRA_GATES)
    assert all(type(name) is str for name in DEFAULT.as_dict())


def test_gate_names_are_written_only_in_the_gate_table() -> None:
    """Outside gates.py, code names a gate through ``Gate``: no string literal anywhere else in
    the core or the webhook is a gate name, a second spelling that a typo would turn into an
    error only at run time (messages and docstrings may still mention gates in prose)."""
    names = set(DRA_GATES)
    table = ROOT / "kubectl_dra" / "gates.py"
    files = [*sorted((ROOT / "kubectl_dra").rglob("*.py")), *sorted((ROOT / "webhook").rglob("*.py"))]
    offenders = [
        f"{path.relative_to(ROOT)}:{node.lineno}: {node.value!r}"
        for path in files if path != table
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.Constant) and node.value in names
    ]
    assert offenders == []


def test_no_gate_set_reads_as_the_newest_defaults_everywhere() -> None:
    """A library caller that passes no gates gets the newest release's defaults from every
    reader: preview's resolver, the allocator, usage and the documents (one rule)."""
    from kubectl_dra.allocation import Allocator
    from kubectl_dra.gates import FeatureGates, effective_gates
    from kubectl_dra.preview.document import gates_dict
    from kubectl_dra.preview.targets import Resolver
    from kubectl_dra.state import ClusterState
    from kubectl_dra.usage import compute_usage

    defaults = FeatureGates.default()
    state = ClusterState()
    assert effective_gates(None) == defaults
    assert Resolver(state, "default").gates == defaults
    assert Allocator(state, None).gates == defaults
    assert compute_usage(state).feature_gates == defaults.as_dict()
    assert gates_dict(None) == dict(sorted(defaults.as_dict().items()))
    from kubectl_dra.gates import Gate
    from kubectl_dra.validation.gating import gate_enabled

    assert all(gate_enabled(None, gate) is defaults.enabled(gate) for gate in Gate)
