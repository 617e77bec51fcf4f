"""``make dist``: the one-file plugin runs with a bare ``python3`` (no venv, nothing installed)
through ``kubectl dra``, and the krew manifest points at its archive.

Slow (the build downloads the dependencies: ~40 s); skipped when PyPI cannot be reached,
when there is no system python3 of the CPython version the build is for, or without kubectl
for the kubectl parts.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parent.parent
DEMO = REPO / "kubectl_dra" / "demo"
BUILD = REPO / "packaging" / "build_plugin.py"

pytestmark = pytest.mark.slow


def _pypi_reachable(tmp: Path) -> bool:
    """Whether pip can fetch from the package index (the build needs it)."""
    try:
        done = subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--dest", str(tmp),
                               "shiv>=1.0.8,<2"], capture_output=True, timeout=120)
    except subprocess.TimeoutExpired:
        return False
    return done.returncode == 0


def _bare_python() -> str | None:
    """A python3 outside any virtual environment, of this interpreter's CPython version."""
    for candidate in ("/usr/bin/python3", "/usr/local/bin/python3"):
        if not os.access(candidate, os.X_OK):
            continue
        version = subprocess.run([candidate, "-c", "import sys; print(sys.version_info[:2] == ({}, {}), sys.prefix "
                                  "== sys.base_prefix)".format(*sys.version_info[:2])], capture_output=True, text=True)
        if version.stdout.split() == ["True", "True"]:
            return candidate
    return None


@pytest.fixture
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("dist")
    if not _pypi_reachable(tmp / "probe"):
        pytest.skip("building the plugin needs the package index (pip could not download), which is unreachable")
    out = tmp / "dist"
    done = subprocess.run([sys.executable, str(BUILD), "--out", str(out), "--build-dir", str(tmp / "build")],
                          capture_output=True, text=True,
                          timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    return out


def _bare_env(home: Path, bindir: Path) -> dict[str, str]:
    """No venv, no PYTHONPATH: only the plugin's directory and the system's."""
    return {"HOME": str(home), "PATH": f"{bindir}{os.pathsep}/usr/bin{os.pathsep}/bin",
            "SHIV_ROOT": str(home / "shiv"), "LANG": "C.UTF-8"}


def test_plugin_runs_with_bare_python_through_kubectl(built: Path, tmp_path: Path) -> None:
    """(One test, so that parallel workers do not build twice.)"""
    check_krew_manifest(built)
    python = _bare_python()
    if python is None:
        pytest.skip(f"no system python3 {sys.version_info[0]}.{sys.version_info[1]} outside a venv "
                    "(the plugin is built for this CPython version)")
    bindir = tmp_path / "bin"
    bindir.mkdir()
    plugin = bindir / "kubectl-dra"
    shutil.copy2(built / "kubectl-dra", plugin)
    env = _bare_env(tmp_path, bindir)
    args = ["preview", "--state", str(DEMO / "cluster.yaml"), "-n", "ml-team",
            "-f", str(DEMO / "claims" / "01-single-gpu.yaml"), "-o", "json"]
    direct = subprocess.run([python, str(plugin), *args], capture_output=True, text=True, env=env, timeout=300)
    assert direct.returncode == 0, direct.stderr
    document = json.loads(direct.stdout)
    assert document["kind"] == "Preview"
    assert {n["node"]: n["status"] for n in document["nodes"]}["gpu-node-1"] == "Allocated"
    kubectl = shutil.which("kubectl")
    if kubectl is None:
        pytest.skip("kubectl is not installed: the plugin ran with bare python3, `kubectl plugin list` not checked")
    listed = subprocess.run([kubectl, "plugin", "list"], capture_output=True, text=True, env=env, timeout=60)
    assert str(plugin) in listed.stdout
    through = subprocess.run([kubectl, "dra", *args], capture_output=True, text=True, env=env, timeout=300)
    assert through.returncode == 0, through.stderr
    assert json.loads(through.stdout) == document
    fit = subprocess.run([kubectl, "dra", "fit", *args[1:-2], "-o", "json"], capture_output=True, text=True,
                         env=env, timeout=300)
    assert fit.returncode == 0 and json.loads(fit.stdout)["kind"] == "Fit", fit.stderr


def check_krew_manifest(built: Path) -> None:
    """The manifest's one platform entry names the archive by its sha256; the archive holds the plugin."""
    manifest = yaml.safe_load((built / "dra.yaml").read_text())
    assert manifest["kind"] == "Plugin" and manifest["metadata"]["name"] == "dra"
    (platform,) = manifest["spec"]["platforms"]
    archive = built / Path(platform["uri"]).name
    assert hashlib.sha256(archive.read_bytes()).hexdigest() == platform["sha256"]
    assert platform["bin"] == "kubectl-dra"
    with tarfile.open(archive) as tar:
        member = tar.getmember("kubectl-dra")
        assert member.mode & 0o111  # executable
        assert tar.extractfile(member).read() == (built / "kubectl-dra").read_bytes()
