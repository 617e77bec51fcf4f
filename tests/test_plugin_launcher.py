"""The plugin's launcher and zipapp preamble (packaging/build_plugin.py), without building: the
launcher runs the zipapp made for its python3 and says, in one line and exit 2, when there is
none; a zipapp started by another version stops in its preamble, before any native import."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import zipapp
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
HERE = f"{sys.version_info.major}.{sys.version_info.minor}"


@pytest.fixture(scope="module")
def build_plugin():
    spec = importlib.util.spec_from_file_location("build_plugin", REPO / "packaging" / "build_plugin.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _fake_app(path: Path, text: str) -> None:
    source = path.parent / (path.stem + "-src")
    source.mkdir()
    (source / "__main__.py").write_text(text)
    zipapp.create_archive(source, path)


def test_the_launcher_runs_the_build_for_its_python(build_plugin, tmp_path: Path) -> None:
    launcher = build_plugin.write_launcher(tmp_path)
    _fake_app(tmp_path / f"kubectl-dra-py{HERE}.pyz", "import sys\nprint('ran', sys.argv[1:])\n")
    done = subprocess.run([sys.executable, str(launcher), "usage", "-o", "json"], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0 and done.stdout.strip() == "ran ['usage', '-o', 'json']", done.stderr


def test_the_launcher_names_the_versions_it_has(build_plugin, tmp_path: Path) -> None:
    launcher = build_plugin.write_launcher(tmp_path)
    other = "3.99"
    _fake_app(tmp_path / f"kubectl-dra-py{other}.pyz", "raise SystemExit('must not run')\n")
    done = subprocess.run([sys.executable, str(launcher), "usage"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr == (f"error: kubectl-dra has no build for Python {HERE} ({sys.executable}); it runs on "
                           f"Python {other}: put one of those first on PATH as python3\n")


def test_a_zipapp_for_another_python_stops_in_its_preamble(build_plugin, tmp_path: Path) -> None:
    preamble = tmp_path / "preamble.py"
    preamble.write_text(build_plugin.PREAMBLE % "3.99")
    done = subprocess.run([sys.executable, str(preamble)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "built for Python 3.99, not " + HERE in done.stderr
    assert done.stderr.count("\n") == 1
    preamble.write_text(build_plugin.PREAMBLE % HERE)
    assert subprocess.run([sys.executable, str(preamble)], timeout=60).returncode == 0


def test_the_plugin_requirements_leave_the_webhook_out(build_plugin) -> None:
    _, requirements, _ = build_plugin.project()
    names = {r.split(">")[0].split("=")[0].split("<")[0].lower() for r in requirements}
    assert not names & {"flask", "granian", "prometheus_client", "cryptography"}
    assert "cel-expr-python" in names and "click" in names
