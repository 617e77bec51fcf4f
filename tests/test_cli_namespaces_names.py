"""``-A/--all-namespaces`` and ``-o name`` on preview, explain, fit and usage, on the bundled demo
cluster (every demo claim, template and pod lives in namespace ml-team)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from kubectl_dra.cli.main import cli
from kubectl_dra.demo import cluster_path

TEMPLATE = "template/gpu-with-nic"
#: the demo's nodes where a gpu-with-nic claim fits, best first (the table's Allocated rows)
FITTING = ["gpu-node-1", "gpu-node-3"]


def run(*args: str, state: tuple[str, ...] = ()) -> tuple[int, str, str]:
    paths = state or (str(cluster_path()),)
    argv = [*args, *(arg for path in paths for arg in ("--state", path))]
    result = CliRunner().invoke(cli, argv, catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture
def template_in_two_namespaces(tmp_path: Path) -> tuple[str, ...]:
    """The demo plus a copy of the gpu-with-nic template in namespace ``other``."""
    docs = [d for d in yaml.safe_load_all(cluster_path().read_text()) if d]
    template = next(d for d in docs if d.get("kind") == "ResourceClaimTemplate"
                    and d["metadata"]["name"] == "gpu-with-nic")
    copy = json.loads(json.dumps(template))
    copy["metadata"]["namespace"] = "other"
    extra = tmp_path / "other.yaml"
    extra.write_text(yaml.safe_dump_all([{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "other"}},
                                         copy]))
    return (str(cluster_path()), str(extra))


# --------------------------------------------------------------------------- -A


@pytest.mark.parametrize("command", ["preview", "explain", "fit"])
def test_all_namespaces_finds_the_target_as_n_does(command: str) -> None:
    code_a, out_a, _ = run(command, TEMPLATE, "-A")
    code_n, out_n, _ = run(command, TEMPLATE, "-n", "ml-team")
    assert (code_a, out_a) == (code_n, out_n)
    assert code_a == 0 and "gpu-node-1" in out_a


def test_without_all_namespaces_the_default_namespace_is_searched() -> None:
    code, out, err = run("preview", TEMPLATE)
    assert code == 2 and out == ""
    assert "ResourceClaimTemplate 'gpu-with-nic' not found in namespace 'default'" in err


@pytest.mark.parametrize("command", ["preview", "explain", "fit"])
def test_all_namespaces_with_namespace_is_a_usage_error(command: str) -> None:
    code, out, err = run(command, TEMPLATE, "-A", "-n", "ml-team")
    assert code == 2 and out == ""
    assert "--namespace and --all-namespaces cannot be used together" in err


def test_all_namespaces_names_a_missing_target() -> None:
    code, out, err = run("preview", "template/no-such-template", "-A")
    assert code == 2 and out == ""
    assert "ResourceClaimTemplate 'no-such-template' not found in any namespace" in err


def test_all_namespaces_bare_claim_name() -> None:
    code, out, err = run("preview", "trainer-a-gpu", "-A", "-o", "name")
    assert code == 0, err
    assert out == "node/gpu-node-1\n"  # an allocated claim fits only where it is allocated


def test_all_namespaces_ambiguous_name_is_an_error_naming_the_namespaces(
        template_in_two_namespaces: tuple[str, ...]) -> None:
    code, out, err = run("preview", TEMPLATE, "-A", state=template_in_two_namespaces)
    assert code == 2 and out == ""
    assert "ResourceClaimTemplate 'gpu-with-nic' exists in namespaces ml-team, other" in err
    assert "Traceback" not in err


def test_all_namespaces_keeps_a_namespace_the_target_names(template_in_two_namespaces: tuple[str, ...]) -> None:
    code, out, err = run("preview", "template/other/gpu-with-nic", "-A", "-o", "json",
                         state=template_in_two_namespaces)
    assert code == 0, err
    claims = {(c["namespace"], c["name"]) for c in json.loads(out)["claims"]}
    assert {ns for ns, _ in claims} == {"other"}


def test_usage_accepts_all_namespaces_and_counts_the_same() -> None:
    code_a, out_a, _ = run("usage", "-A")
    code, out, _ = run("usage")
    assert code_a == code == 0
    assert out_a == out
    cluster_row = out.splitlines()[1].split()
    assert cluster_row[:5] == ["*", "*", "*", "58", "4"]  # the four allocated ml-team claims' devices


def test_usage_has_no_name_output() -> None:
    code, out, err = run("usage", "-o", "name")
    assert code == 2 and out == ""
    assert "'name' is not one of" in err


# --------------------------------------------------------------------------- -o name


@pytest.mark.parametrize("command", ["preview", "explain"])
def test_name_output_lists_fitting_nodes(command: str) -> None:
    code, out, err = run(command, TEMPLATE, "-n", "ml-team", "-o", "name")
    assert code == 0, err
    assert out.splitlines() == [f"node/{n}" for n in FITTING]


@pytest.mark.parametrize("command", ["preview", "explain"])
def test_name_output_when_nothing_fits_is_empty_with_exit_1(command: str) -> None:
    code, out, err = run(command, TEMPLATE, "-n", "ml-team", "--node", "cpu-node-1", "-o", "name")
    assert code == 1
    assert out == ""
    assert "fit on none of 1 node" in err or "0/1 node fit" in err  # the summary says why


def test_fit_name_output_lists_nodes_that_get_replicas() -> None:
    code, out, err = run("fit", TEMPLATE, "-A", "-o", "name")
    assert code == 0, err
    code_j, doc, _ = run("fit", TEMPLATE, "-A", "-o", "json")
    placed = [n["node"] for n in json.loads(doc)["nodes"] if n["replicas"]]
    assert placed and out.splitlines() == [f"node/{n}" for n in placed]
    assert sorted(placed) == FITTING
    assert "stops at 2" in err


def test_fit_name_output_none_fits() -> None:
    code, out, err = run("fit", TEMPLATE, "-A", "--node", "cpu-node-1", "-o", "name")
    assert code == 1 and out == ""


def test_preview_explain_flag_refuses_name_output() -> None:
    code, out, err = run("preview", TEMPLATE, "-A", "--explain", "-o", "name")
    assert code == 2 and out == ""
    assert "--explain cannot be combined with -o name" in err


@pytest.mark.parametrize("command", ["preview", "explain", "fit"])
def test_help_documents_both_flags(command: str) -> None:
    code, out, _ = run(command, "--help")
    assert code == 0
    assert "-A, --all-namespaces" in out
    assert "-o name prints node/NAME" in " ".join(out.split())
