"""Shell completion: click's own (``_KUBECTL_DRA_COMPLETE``) and kubectl's plugin completion
through the ``kubectl_complete-dra`` executable (cobra's output protocol)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from kubectl_dra.cli import completion
from kubectl_dra.cli.completion import (
    DIRECTIVE_DEFAULT,
    DIRECTIVE_NO_FILE_COMP,
    DIRECTIVE_NO_SPACE,
    complete,
    render,
)

BIN = Path(sys.executable).parent
SCRIPT = BIN / "kubectl_complete-dra"


def values(args: list[str], word: str) -> tuple[list[str], int]:
    candidates, directive = complete(args, word)
    return [c.value for c in candidates], directive


@pytest.fixture
def state(tmp_path: Path) -> str:
    def obj(kind: str, name: str, ns: str | None = None) -> dict:
        meta = {"name": name, **({"namespace": ns} if ns else {})}
        return {"apiVersion": "v1", "kind": kind, "metadata": meta}

    docs = [obj("Node", "node-a"), obj("Node", "node-b"), obj("ResourceClaim", "gpu-1", "default"),
            obj("ResourceClaim", "gpu-2", "default"), obj("ResourceClaim", "other", "ml"),
            obj("Pod", "trainer-0", "ml"), obj("ResourceClaimTemplate", "tpl", "default")]
    path = tmp_path / "state.yaml"
    path.write_text(yaml.safe_dump_all(docs))
    return str(path)


def test_subcommands_and_their_descriptions() -> None:
    candidates, directive = complete([], "")
    assert [c.value for c in candidates] == ["drain-check", "explain", "fit", "metadata", "pending", "preview", "usage",
                                            "validate"]
    assert candidates[-1].help == "Apply the API server's DRA rules to files offline."  # as in --help
    assert directive == DIRECTIVE_NO_FILE_COMP
    assert values([], "va") == (["validate"], DIRECTIVE_NO_FILE_COMP)


def test_options_and_choices() -> None:
    names, _ = values(["usage"], "--no")
    assert names == ["--node", "--no-headers"]
    assert values(["preview", "-o"], "") == (["table", "wide", "json", "yaml", "name"], DIRECTIVE_NO_FILE_COMP)
    assert values(["preview"], "--output=j") == (["json"], DIRECTIVE_NO_FILE_COMP)
    assert values(["validate", "-o"], "y") == (["yaml"], DIRECTIVE_NO_FILE_COMP)


def test_path_options_fall_back_to_file_completion() -> None:
    for args in (["validate", "-f"], ["validate", "-f", "a.yaml", "--old"], ["usage", "--state"],
                 ["preview", "--kubeconfig"]):
        names, directive = values(args, "")
        assert (names, directive) == ([], DIRECTIVE_DEFAULT), args


def test_target_kinds_without_state() -> None:
    names, directive = values(["preview"], "")
    assert names == ["claim/", "template/", "pod/", "podgroup/"]
    assert directive == DIRECTIVE_NO_FILE_COMP | DIRECTIVE_NO_SPACE
    assert values(["explain"], "po") == (["pod/", "podgroup/"], DIRECTIVE_NO_FILE_COMP | DIRECTIVE_NO_SPACE)


def test_target_names_from_state_respect_the_namespace(state: str) -> None:
    assert values(["preview", "--state", state], "claim/gpu")[0] == ["claim/gpu-1", "claim/gpu-2"]
    assert values(["preview", "--state", state], "claim/")[0] == ["claim/gpu-1", "claim/gpu-2"]
    assert values(["preview", "--state", state, "-n", "ml"], "claim/")[0] == ["claim/other"]
    assert values(["explain", "--state", state, "-n", "ml"], "pod/t")[0] == ["pod/trainer-0"]
    assert values(["preview", "--state", state], "template/")[0] == ["template/tpl"]
    # a bare word completes kinds and bare claim names; the names end the word (a space follows)
    names, directive = values(["preview", "--state", state], "gp")
    assert (names, directive) == (["gpu-1", "gpu-2"], DIRECTIVE_NO_FILE_COMP)
    assert values(["preview", "--state", state], "nosuch/")[0] == []


def test_nodes_namespaces_gates_and_versions(state: str) -> None:
    assert values(["preview", "--state", state, "--node"], "")[0] == ["node-a", "node-b"]
    assert values(["usage", "--state", state, "--node"], "node-b")[0] == ["node-b"]
    assert values(["preview", "--state", state, "-n"], "")[0] == ["default", "ml"]
    names, directive = values(["preview", "--feature-gates"], "DRAAdminAccess=true,DRAPart")
    assert names == ["DRAAdminAccess=true,DRAPartitionableDevices=", "DRAAdminAccess=true,DRAPartitionableDevicesType="]
    assert directive & DIRECTIVE_NO_SPACE
    assert values(["validate", "--feature-gates"], "DRAAdminAccess=t")[0] == ["DRAAdminAccess=true"]
    assert values(["usage", "--kubernetes-version"], "1.3")[0] == ["1.34", "1.35", "1.36", "1.37"]


def test_unreadable_state_completes_kinds_only(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("kind: [\n")
    assert values(["preview", "--state", str(bad)], "claim/")[0] == []
    assert values(["preview", "--state", str(bad)], "")[0] == ["claim/", "template/", "pod/", "podgroup/"]


def test_render_follows_cobra() -> None:
    cands = [completion.Candidate("a", "First. Second."), completion.Candidate("b")]
    assert render(cands, 4) == "a\tFirst.\nb\n:4\n"
    assert render(cands, 6, descriptions=False) == "a\nb\n:6\n"
    long = completion.Candidate("c", "x" * 200)
    line = render([long], 0).splitlines()[0]
    assert len(line.split("\t")[1]) == 80


def run_script(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(SCRIPT), *args], capture_output=True, text=True, timeout=60, env=env)


@pytest.mark.slow
def test_installed_script_speaks_cobra(state: str) -> None:
    assert SCRIPT.exists(), f"{SCRIPT} missing: reinstall with pip install -e ."
    out = run_script("preview", "--state", state, "claim/")
    assert out.returncode == 0 and out.stderr == ""
    assert out.stdout.splitlines() == ["claim/gpu-1\tResourceClaim in default",
                                       "claim/gpu-2\tResourceClaim in default", ":4"]
    # cobra's own spelling is accepted too
    assert run_script("__completeNoDesc", "pre").stdout == "preview\n:4\n"
    assert run_script().stdout.splitlines()[-1] == ":4"  # no words: the subcommands


@pytest.mark.slow
def test_click_completion_of_kubectl_dra() -> None:
    env = {**os.environ, "COMP_WORDS": "kubectl-dra preview -o ", "COMP_CWORD": "3",
           "_KUBECTL_DRA_COMPLETE": "bash_complete"}
    out = subprocess.run([str(BIN / "kubectl-dra")], capture_output=True, text=True, timeout=60, env=env)
    assert out.returncode == 0
    assert out.stdout.splitlines() == ["plain,table", "plain,wide", "plain,json", "plain,yaml", "plain,name"]
    env["COMP_WORDS"], env["COMP_CWORD"] = "kubectl-dra validate -f ", "3"
    out = subprocess.run([str(BIN / "kubectl-dra")], capture_output=True, text=True, timeout=60, env=env)
    assert out.stdout.splitlines() == ["file,"]


@pytest.mark.slow
def test_through_real_kubectl(state: str) -> None:
    kubectl = shutil.which("kubectl") or "/usr/bin/kubectl"
    if not os.path.exists(kubectl):
        pytest.skip("kubectl is not installed")
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"}
    out = subprocess.run([kubectl, "__complete", "dra", ""], capture_output=True, text=True, timeout=60, env=env)
    lines = out.stdout.splitlines()
    assert [line.split("\t")[0] for line in lines[:-1]] == ["drain-check", "explain", "fit", "metadata",
                                                                 "pending", "preview", "usage", "validate"]
    assert lines[-1] == ":4"
    out = subprocess.run([kubectl, "__complete", "dra", "preview", "--state", state, "-n", "ml", "pod/"],
                         capture_output=True, text=True, timeout=60, env=env)
    assert out.stdout.splitlines() == ["pod/trainer-0\tPod in ml", ":4"]
