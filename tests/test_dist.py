"""``make dist``: the plugin runs with a bare ``python3`` of every supported version (no venv,
nothing installed), through ``kubectl dra`` too, says so on an unsupported one, and the krew
manifest points at its archive.

Slow (the build downloads the dependencies: ~40 s per Python version); it builds for the
supported versions that have an interpreter on this machine (each is then run); skipped when
PyPI cannot be reached, or without kubectl for the kubectl parts.
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
SUPPORTED_PYTHONS = ("3.11", "3.12", "3.13")  # packaging/build_plugin.py's

pytestmark = pytest.mark.slow


def _pypi_reachable(tmp: Path) -> bool:
    """Whether pip can fetch from the package index (the build needs it)."""
    try:
        done = subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--dest", str(tmp),
                               "shiv>=1.0.8,<2"], capture_output=True, timeout=120)
    except subprocess.TimeoutExpired:
        return False
    return done.returncode == 0


def _bare_pythons() -> dict[str, str]:
    """Python versions -> an interpreter of that version outside any virtual environment (the
    system's, or pyenv's), for 3.10 (unsupported) and every version the plugin is built for."""
    found: dict[str, str] = {}
    candidates = ["/usr/bin/python3", "/usr/local/bin/python3"]
    candidates += [f"/usr/bin/python{v}" for v in ("3.10", *SUPPORTED_PYTHONS)]
    candidates += sorted(str(p) for p in Path("/root/.pyenv/versions").glob("3.*/bin/python3"))
    for candidate in candidates:
        if not os.access(candidate, os.X_OK):
            continue
        probe = subprocess.run([candidate, "-c", "import sys; print('%d.%d' % sys.version_info[:2], "
                                "sys.prefix == sys.base_prefix)"], capture_output=True, text=True)
        version, bare = (probe.stdout.split() + ["", ""])[:2]
        if bare == "True" and version in ("3.10", *SUPPORTED_PYTHONS):
            found.setdefault(version, candidate)
    return found


@pytest.fixture
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("dist")
    if not _pypi_reachable(tmp / "probe"):
        pytest.skip("building the plugin needs the package index (pip could not download), which is unreachable")
    out = tmp / "dist"
    here = f"{sys.version_info.major}.{sys.version_info.minor}"
    versions = sorted({here, *(v for v in _bare_pythons() if v in SUPPORTED_PYTHONS)})
    done = subprocess.run([sys.executable, str(BUILD), "--out", str(out), "--build-dir", str(tmp / "build"),
                           "--homepage", "https://example.com/kubectl-dra", "--base-url",
                           "https://example.com/kubectl-dra/releases/download",
                           *(a for v in versions for a in ("--python-version", v))],
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
    pythons = _bare_pythons()
    runnable = {v: p for v, p in pythons.items() if (built / f"kubectl-dra-py{v}.pyz").exists()}
    if not runnable:
        pytest.skip("no python3 outside a venv of a version the plugin was built for")
    bindir = tmp_path / "bin"
    bindir.mkdir()
    for path in built.iterdir():
        if path.name == "kubectl-dra" or path.suffix == ".pyz":
            shutil.copy2(path, bindir / path.name)
    plugin = bindir / "kubectl-dra"
    env = _bare_env(tmp_path, bindir)
    args = ["preview", "--state", str(DEMO / "cluster.yaml"), "-n", "ml-team",
            "-f", str(DEMO / "claims" / "01-single-gpu.yaml"), "-o", "json"]
    documents = []
    for version, python in sorted(runnable.items()):
        direct = subprocess.run([python, str(plugin), *args], capture_output=True, text=True, env=env, timeout=300)
        assert direct.returncode == 0, (version, direct.stderr)
        document = json.loads(direct.stdout)
        assert document["kind"] == "Preview"
        assert {n["node"]: n["status"] for n in document["nodes"]}["gpu-node-1"] == "Allocated"
        documents.append(document)
    assert all(d == documents[0] for d in documents)  # the same answer on every Python
    if "3.10" in pythons:  # older than the project supports: one clear line, exit 2
        old = subprocess.run([pythons["3.10"], str(plugin), *args], capture_output=True, text=True, env=env,
                             timeout=60)
        assert old.returncode == 2 and old.stderr.startswith("error: kubectl-dra has no build for Python 3.10")
        assert old.stderr.count("\n") == 1, old.stderr
    kubectl = shutil.which("kubectl")
    if kubectl is None:
        pytest.skip("kubectl is not installed: the plugin ran with bare python3, `kubectl plugin list` not checked")
    env["PATH"] = f"{bindir}{os.pathsep}{os.path.dirname(next(iter(runnable.values())))}{os.pathsep}/usr/bin:/bin"
    listed = subprocess.run([kubectl, "plugin", "list"], capture_output=True, text=True, env=env, timeout=60)
    assert str(plugin) in listed.stdout
    through = subprocess.run([kubectl, "dra", *args], capture_output=True, text=True, env=env, timeout=300)
    assert through.returncode == 0, through.stderr
    assert json.loads(through.stdout) == documents[0]
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
    assert manifest["spec"]["homepage"] == "https://example.com/kubectl-dra"
    with tarfile.open(archive) as tar:
        member = tar.getmember("kubectl-dra")
        assert member.mode & 0o111  # executable
        assert tar.extractfile(member).read() == (built / "kubectl-dra").read_bytes()
        names = set(tar.getnames())
        assert {"LICENSE", "README.md"} <= names
        assert {p.name for p in built.glob("*.pyz")} <= names
        assert "Apache License" in tar.extractfile("LICENSE").read().decode()
