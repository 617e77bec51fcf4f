"""``kubectl dra metadata`` end to end: local trees, a container through a stand-in
``kubectl exec``, --check, --expected, and plugin discovery through the real kubectl."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import yaml

from kubectl_dra.cli.main import cli
from tests.metadata_builders import V1ALPHA1, both_versions, device, metadata_object, stream, write

RC = "resourceclaims"
TPL = "resourceclaimtemplates"


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """A metadata directory: a direct claim served by two drivers (one with a subrequest)
    and a template claim."""
    root = tmp_path / "metadata"
    write(root, f"{RC}/train/gpu/gpu.example.com-metadata.json",
          both_versions(claim="train", requests={"gpu/big": [device("gpu-0", model="H100", index=0)]}))
    write(root, f"{RC}/train/gpu/nic.example.com-metadata.json",
          both_versions(claim="train", requests={"gpu/big": [device("eth1", driver="nic.example.com", numa=1)]}))
    write(root, f"{TPL}/scratch/mem/mem.example.com-metadata.json",
          both_versions(claim="pod-scratch-x", pod_claim_name="scratch",
                        requests={"mem": [device("mem-0", driver="mem.example.com")]}))
    return root


def invoke(runner, *args: str):
    return runner.invoke(cli, list(args), catch_exceptions=False)


def test_table_lists_every_device(cli_runner, tree):
    result = invoke(cli_runner, "metadata", "--dir", str(tree))
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0].split() == ["CLAIM", "REQUEST", "DRIVER", "POOL", "DEVICE", "ATTRIBUTES"]
    rows = [line.split() for line in lines[1:]]
    assert ["claim/train", "gpu/big", "gpu.example.com", "node-1", "gpu-0", "index=0,model=H100"] in rows
    assert ["claim/train", "gpu/big", "nic.example.com", "node-1", "eth1", "numa=1"] in rows
    assert ["template/scratch", "mem", "mem.example.com", "node-1", "mem-0", "<none>"] in rows


def test_json_output_holds_decoded_objects(cli_runner, tree):
    result = invoke(cli_runner, "metadata", "--dir", str(tree), "-o", "json")
    doc = json.loads(result.output)
    assert result.exit_code == 0
    assert len(doc["files"]) == 3 and doc["errors"] == []
    assert {f["apiVersion"] for f in doc["files"]} == {"metadata.resource.k8s.io/v1beta1"}
    assert yaml.safe_load(invoke(cli_runner, "metadata", "--dir", str(tree), "-o", "yaml").output) == doc


def test_malformed_and_empty_files_exit_1_with_one_line_each(cli_runner, tree):
    write(tree, f"{RC}/bad/r/d.io-metadata.json", '{"apiVersion": ')
    write(tree, f"{RC}/empty/r/d.io-metadata.json", "")
    result = invoke(cli_runner, "metadata", "--dir", str(tree))
    assert result.exit_code == 1
    errors = [line for line in result.output.splitlines() if line.startswith("error:")]
    assert len(errors) == 2
    assert any("no metadata objects found in stream" in e for e in errors)
    assert "Traceback" not in result.output


def test_check_passes_a_good_tree_and_flags_a_stale_generation(cli_runner, tree):
    ok = invoke(cli_runner, "metadata", "--dir", str(tree), "--check")
    assert ok.exit_code == 0, ok.output
    assert "3 files checked, 0 violation(s)" in ok.output
    write(tree, f"{RC}/train/gpu/gpu.example.com-metadata.json",
          both_versions(claim="train", requests={"gpu": [device("gpu-0")]}, generation=0))
    bad = invoke(cli_runner, "metadata", "--dir", str(tree), "--check", "-o", "json")
    assert bad.exit_code == 1
    (violation,) = json.loads(bad.output)["violations"]
    assert violation["rule"] == "generation" and violation["file"].endswith("gpu.example.com-metadata.json")


def test_check_unknown_future_version_first_is_fine(cli_runner, tmp_path):
    future = metadata_object("c", {"r": []}, version="metadata.resource.k8s.io/v1")
    path = write(tmp_path, f"{RC}/c/r/d.io-metadata.json", stream(future, metadata_object("c", {"r": []}, version=V1ALPHA1)))
    result = invoke(cli_runner, "metadata", "-f", str(path), "--check")
    assert result.exit_code == 0, result.output


def _state(tmp_path: Path, results: list[dict]) -> Path:
    objs = [
        {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "gpus"},
         "spec": {"driver": "gpu.example.com", "nodeName": "node-1",
                  "pool": {"name": "node-1", "generation": 1, "resourceSliceCount": 1},
                  "devices": [{"name": "gpu-0", "attributes": {"model": {"string": "H100"}, "index": {"int": 0}}}]}},
        {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": "train", "namespace": "ml"},
         "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu"}}]}},
         "status": {"allocation": {"devices": {"results": results}}}},
    ]
    path = tmp_path / "state.yaml"
    path.write_text(yaml.safe_dump_all(objs))
    return path


def test_expected_matches_and_differs(cli_runner, tree, tmp_path):
    result_ok = [{"request": "gpu/big", "driver": "gpu.example.com", "pool": "node-1", "device": "gpu-0"},
                 {"request": "gpu/big", "driver": "nic.example.com", "pool": "node-1", "device": "eth1"}]
    state = _state(tmp_path, result_ok)
    ok = invoke(cli_runner, "metadata", "--dir", str(tree), "--expected", "train", "-n", "ml", "--state", str(state))
    assert ok.exit_code == 0, ok.output
    assert "0 difference(s)" in ok.output
    wrong = _state(tmp_path, [{"request": "gpu", "driver": "gpu.example.com", "pool": "node-1", "device": "gpu-1"}])
    bad = invoke(cli_runner, "metadata", "--dir", str(tree), "--expected", "train", "-n", "ml",
                 "--state", str(wrong), "-o", "json")
    assert bad.exit_code == 1
    kinds = {d["kind"] for d in json.loads(bad.output)["differences"]}
    assert {"missing-device", "unexpected-device", "unexpected-file"} <= kinds


def test_expected_claim_not_found_is_exit_2(cli_runner, tree, tmp_path):
    state = _state(tmp_path, [])
    result = cli_runner.invoke(cli, ["metadata", "--dir", str(tree), "--expected", "nope", "--state", str(state)])
    assert result.exit_code == 2
    assert "error: ResourceClaim 'nope' not found in namespace 'default'" in result.output


@pytest.mark.parametrize("args", [[], ["pod-1", "--dir", "x"], ["--dir", "x", "-c", "main"],
                                  ["--dir", "x", "--check", "--expected", "c"]])
def test_source_usage_errors_exit_2(args):
    proc = subprocess.run([sys.executable, "-m", "kubectl_dra", "metadata", *args], capture_output=True, text=True)
    assert proc.returncode == 2
    assert proc.stderr.startswith("error: ") and "Traceback" not in proc.stderr


STAND_IN = textwrap.dedent("""\
    #!{python}
    # A stand-in kubectl: serves `exec POD -- find|cat` from $FAKE_CONTAINER_ROOT, logs argv.
    import os, sys
    args = sys.argv[1:]
    with open(os.environ["FAKE_KUBECTL_LOG"], "a") as log:
        log.write(" ".join(args) + "\\n")
    cmd = args[args.index("--") + 1:]
    root = os.environ["FAKE_CONTAINER_ROOT"]
    if "exec" not in args or args[args.index("exec") + 1] != "trainer-0":
        sys.stderr.write('Error from server (NotFound): pods "x" not found\\n'); sys.exit(1)
    if cmd[0] == "find":
        base = root + cmd[1]
        if not os.path.isdir(base):
            sys.stderr.write(f"find: '{{cmd[1]}}': No such file or directory\\n"); sys.exit(1)
        for d, _, files in os.walk(base):
            for f in files:
                print(os.path.join(d, f)[len(root):])
    elif cmd[0] == "cat":
        sys.stdout.write(open(root + cmd[1]).read())
    """)


@pytest.fixture
def fake_kubectl(tmp_path: Path, tree: Path):
    container_root = tmp_path / "container"
    shutil.copytree(tree, container_root / "var/run/kubernetes.io/dra-device-attributes")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    script = bin_dir / "kubectl"
    script.write_text(STAND_IN.format(python=sys.executable))
    script.chmod(0o755)
    log = tmp_path / "kubectl.log"
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
           "FAKE_CONTAINER_ROOT": str(container_root), "FAKE_KUBECTL_LOG": str(log)}
    return env, log


def test_reads_a_container_through_kubectl_exec(fake_kubectl):
    env, log = fake_kubectl
    proc = subprocess.run([sys.executable, "-m", "kubectl_dra", "metadata", "trainer-0", "-c", "main", "-n", "ml",
                           "--context", "prod", "-o", "json"], capture_output=True, text=True, env=env)
    assert proc.returncode == 0, proc.stderr
    paths = sorted(f["path"] for f in json.loads(proc.stdout)["files"])
    assert paths[0] == "/var/run/kubernetes.io/dra-device-attributes/resourceclaims/train/gpu/gpu.example.com-metadata.json"
    assert len(paths) == 3
    calls = log.read_text().splitlines()
    assert calls[0].startswith("--context prod -n ml exec trainer-0 -c main -- find")
    assert sum(" -- cat " in c for c in calls) == 3


def test_container_errors_are_one_line_exit_2(fake_kubectl):
    env, _ = fake_kubectl
    proc = subprocess.run([sys.executable, "-m", "kubectl_dra", "metadata", "missing-pod"],
                          capture_output=True, text=True, env=env)
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == ['error: pod/missing-pod: kubectl exec failed: '
                                                'Error from server (NotFound): pods "x" not found']


@pytest.mark.slow
def test_plugin_discovery_through_real_kubectl(tree):
    kubectl = shutil.which("kubectl", path="/usr/bin:/usr/local/bin") or shutil.which("kubectl")
    plugin = shutil.which("kubectl-dra", path=os.path.dirname(sys.executable))
    if kubectl is None or plugin is None:
        pytest.skip("kubectl and the installed kubectl-dra are both needed for plugin discovery")
    env = {**os.environ, "PATH": f"{os.path.dirname(plugin)}{os.pathsep}{os.environ['PATH']}"}
    proc = subprocess.run([kubectl, "dra", "metadata", "--dir", str(tree), "--check"], capture_output=True,
                          text=True, env=env)
    assert proc.returncode == 0, proc.stderr
    assert "3 files checked, 0 violation(s)" in proc.stdout + proc.stderr


def test_directory_skips_files_consumers_do_not_read_but_check_reports_them(cli_runner, tree):
    (tree / RC / "train" / "gpu" / "README.txt").write_text("notes")
    shown = cli_runner.invoke(cli, ["metadata", "--dir", str(tree)])
    assert shown.exit_code == 0
    assert "warning: skipped " in shown.stderr and "README.txt: not a <driver>-metadata.json file" in shown.stderr
    checked = cli_runner.invoke(cli, ["metadata", "--dir", str(tree), "--check"])
    assert checked.exit_code == 1
    assert "README.txt: file-name: " in checked.stdout


def test_binary_file_is_named(cli_runner, tmp_path):
    path = tmp_path / "gpu.example.com-metadata.json"
    path.write_bytes(b"\xff\xfe\x00")
    result = cli_runner.invoke(cli, ["metadata", "-f", str(path)])
    assert result.exit_code == 2
    assert result.stderr.strip() == f"error: {path}: not a JSON text file (invalid UTF-8 at byte 0)"
