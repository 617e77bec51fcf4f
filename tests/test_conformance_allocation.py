"""Every allocation conformance scenario through the public ``kubectl dra preview -o json`` contract.

Each scenario's objects (plus the Node built from ``node:``) go into a state file; the
``allocate`` claims are previewed together on that node with every DRA gate off except the
scenario's features; the node's entry in the Preview document must match ``expect``.
A few scenarios also run through the installed ``kubectl-dra`` executable and through
``kubectl dra`` plugin discovery.
"""

from __future__ import annotations

import functools
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from kubectl_dra.cli.main import cli
from tests.conformance_compare import check_shareids_unique, node_object, claim_ref, compare_allocations, load_scenario
from tests.conftest import REPO, corpus, scenario_files

pytestmark = corpus  # every test here reads the shared conformance corpus

SCENARIO_FILES = scenario_files("allocation")


@functools.cache
def loaded(path: Path) -> Any:
    """One scenario, parsed when a test needs it (collection stays fast under xdist)."""
    return load_scenario(path)


def loaded_by_name(name: str) -> Any:
    (path,) = [p for p in SCENARIO_FILES if p.stem == name]
    return loaded(path)


def dra_gates() -> list[str]:
    """Names of every DRA feature gate kubectl-dra knows, except the base gate
    DynamicResourceAllocation (DRA itself stays on: features: [] means GA behaviour)."""
    from kubectl_dra.gates import BASE_GATE, DRA_GATES

    return sorted(g for g in DRA_GATES if g != BASE_GATE)


def gates_flag(scenario: dict[str, Any]) -> str:
    """``--feature-gates``: every DRA gate false except the scenario's features."""
    features = set(scenario.get("features") or [])
    unknown = features - set(dra_gates())  # a typo must not silently test nothing
    assert not unknown, f"{scenario['name']}: scenario uses gates kubectl-dra does not know: {sorted(unknown)}"
    return ",".join(f"{g}={'true' if g in features else 'false'}" for g in dra_gates())


def write_state(scenario: dict[str, Any], directory: Path) -> Path:
    """The scenario's objects and its Node (as conformance_compare builds it) in one YAML file."""
    path = directory / "state.yaml"
    docs = [*(scenario.get("objects") or []), node_object(scenario.get("node") or {})]
    path.write_text(yaml.safe_dump_all(docs, sort_keys=False), encoding="utf-8")
    return path


def claim_targets(scenario: dict[str, Any]) -> list[str]:
    """``allocate`` entries as preview targets (``claim/NS/NAME``)."""
    targets = []
    for entry in scenario.get("allocate") or []:
        ns, name = claim_ref(str(entry))
        targets.append(f"claim/{ns}/{name}")
    return targets


#: upstream's answers come from Allocate without a filter timeout (DRASchedulerFilterTimeout is
#: off in every scenario): a generous limit keeps a loaded test machine from turning a long,
#: exhaustive search into a timeout error
SEARCH_TIMEOUT = "300s"


def preview_args(scenario: dict[str, Any], state: Path) -> list[str]:
    return ["preview", "--state", str(state), "--node", scenario["node"]["name"], "-o", "json",
            "--timeout", SEARCH_TIMEOUT, "--feature-gates", gates_flag(scenario), *claim_targets(scenario)]


def node_entry(document: dict[str, Any], node: str) -> dict[str, Any]:
    entries = [n for n in document["nodes"] if n["node"] == node]
    assert len(entries) == 1, f"expected one entry for node {node}: {document['nodes']}"
    return entries[0]


def check(scenario: dict[str, Any], code: int, document: dict[str, Any]) -> None:
    """The node's entry (and the exit code) against ``expect``."""
    name = scenario["name"]
    expect = scenario["expect"]
    assert document["apiVersion"] == "kubectl-dra/v1" and document["kind"] == "Preview"
    entry = node_entry(document, scenario["node"]["name"])
    if "error" in expect:
        assert entry["status"] == "Error", f"{name}: expected an error ({expect['error']!r}), got {entry}"
        assert entry["error"], f"{name}: an Error entry must say why"
        assert code == 2, f"{name}: every node failed with an error: exit 2 expected, got {code}"
    elif expect.get("unschedulable"):
        assert entry["status"] == "Unschedulable", f"{name}: expected unschedulable, got {entry}"
        assert entry["reasons"], f"{name}: an Unschedulable entry must say why"
        assert code == 1
    else:
        assert entry["status"] == "Allocated", f"{name}: expected allocations, got {entry}"
        assert code == 0
        refs = [{"namespace": a["namespace"], "name": a["name"]} for a in entry["allocations"]]
        assert refs == document["claims"], f"{name}: one allocation per claim, in order"
        actual = [a["allocation"] for a in entry["allocations"]]
        problems = compare_allocations(expect["allocations"], actual) + check_shareids_unique(actual)
        assert not problems, f"{name}:\n  " + "\n  ".join(problems)


def run_in_process(scenario: dict[str, Any], tmp_path: Path) -> tuple[int, dict[str, Any], str]:
    state = write_state(scenario, tmp_path)
    result = CliRunner().invoke(cli, preview_args(scenario, state), catch_exceptions=False)
    assert result.exit_code in (0, 1, 2), f"{scenario['name']}: exit {result.exit_code}\n{result.output}"
    try:
        document = json.loads(result.stdout)
    except json.JSONDecodeError:
        pytest.fail(f"{scenario['name']}: no JSON document (exit {result.exit_code}): "
                    f"{result.stdout[:300]!r} {result.stderr[:500]!r}")
    return result.exit_code, document, result.stderr


def test_scenarios_are_all_found() -> None:
    """The runner sees the whole scenario set."""
    assert len(SCENARIO_FILES) >= 230


@pytest.mark.parametrize("path", SCENARIO_FILES, ids=lambda p: p.stem)
def test_allocation_scenario(path: Path, tmp_path: Path) -> None:
    scenario = loaded(path).raw
    assert scenario["name"] == path.stem, "a scenario's name equals its file name"
    if scenario.get("skip"):
        pytest.skip(str(scenario["skip"]))
    code, document, _ = run_in_process(scenario, tmp_path)
    check(scenario, code, document)


# --------------------------------------------------------------------------- real processes

#: a few scenarios of different outcomes, run through real executables
PROCESS_SCENARIOS = ["simple", "unknown-class", "not-enough-suitable-devices", "kep-consumable-capacity-bandwidth-example"]
VENV_BIN = REPO / ".venv" / "bin"


def _by_name(name: str) -> dict[str, Any]:
    return loaded_by_name(name).raw


def _process_env() -> dict[str, str]:
    bin_dir = str(VENV_BIN if (VENV_BIN / "kubectl-dra").exists() else Path(sys.executable).parent)
    env = {**os.environ, "PATH": bin_dir + os.pathsep + os.environ.get("PATH", ""), "KUBECONFIG": "/dev/null"}
    env.pop("KUBECTL_DRA_DEBUG", None)
    return env


def _run_process(argv: list[str], scenario: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    proc = subprocess.run(argv, capture_output=True, text=True, env=_process_env(), timeout=120)
    assert proc.returncode in (0, 1, 2), f"{scenario['name']}: exit {proc.returncode}: {proc.stderr}"
    assert "Traceback" not in proc.stderr
    return proc.returncode, json.loads(proc.stdout)


@pytest.mark.slow
@pytest.mark.parametrize("name", PROCESS_SCENARIOS)
def test_scenario_through_executable(name: str, tmp_path: Path) -> None:
    exe = shutil.which("kubectl-dra", path=_process_env()["PATH"])
    if exe is None:
        pytest.skip("the kubectl-dra executable is not installed (pip install -e . installs it)")
    scenario = _by_name(name)
    code, document = _run_process([exe, *preview_args(scenario, write_state(scenario, tmp_path))], scenario)
    check(scenario, code, document)


@pytest.mark.slow
@pytest.mark.parametrize("name", PROCESS_SCENARIOS[:2])
def test_scenario_through_kubectl_plugin(name: str, tmp_path: Path) -> None:
    kubectl = shutil.which("kubectl")
    if kubectl is None:
        pytest.skip("kubectl is not installed on this machine")
    scenario = _by_name(name)
    code, document = _run_process([kubectl, "dra", *preview_args(scenario, write_state(scenario, tmp_path))],
                                  scenario)
    check(scenario, code, document)
