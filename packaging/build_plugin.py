"""Build the one-file kubectl plugin: ``dist/kubectl-dra`` (a zipapp with its dependencies),
a krew archive of it, and the krew manifest pointing at that archive.

The zipapp is made with shiv (https://github.com/linkedin/shiv): the plugin's packages and
its runtime dependencies (those of ``pyproject.toml`` minus the webhook's) go into the file,
and on first run shiv unpacks them once into ``~/.shiv`` (``SHIV_ROOT`` overrides), because
native extension modules (cel-expr-python, protobuf, PyYAML, orjson) cannot be imported from
inside a zip. So the file runs with a bare ``python3`` of the CPython version it was built
for (no venv, nothing installed), on the platform it was built for.

Usage::

    python packaging/build_plugin.py                    # this machine's platform and Python
    python packaging/build_plugin.py --platform macosx_11_0_arm64 --python-version 3.12
    python packaging/build_plugin.py --platform macosx_10_12_x86_64 --python-version 3.11

Other platforms are built on any machine with pip's ``--platform``/``--python-version``
(binary wheels only: cel-expr-python has none for Linux arm64). Windows builds, but kubectl
runs plugins there only as .exe/.cmd files. Needs network access to PyPI (pip downloads the
dependencies and shiv).
"""

from __future__ import annotations

import argparse
import hashlib
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tarfile
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
#: dependencies only the admission webhook needs; the plugin leaves them out
WEBHOOK_ONLY = {"flask", "granian", "prometheus-client", "prometheus_client", "cryptography"}
ENTRY_POINT = "kubectl_dra.cli.main:main"
SHIV = "shiv>=1.0.8,<2"
#: pip/wheel platform tag prefix -> (krew os, krew arch)
KREW_PLATFORMS = (
    (r"^(manylinux|musllinux|linux).*x86_64$", ("linux", "amd64")),
    (r"^(manylinux|musllinux|linux).*aarch64$", ("linux", "arm64")),
    (r"^macosx.*arm64$", ("darwin", "arm64")),
    (r"^macosx.*x86_64$", ("darwin", "amd64")),
    (r"^win_amd64$", ("windows", "amd64")),
)


def project() -> tuple[str, list[str]]:
    """The project's version and the plugin's runtime requirements, from pyproject.toml."""
    data = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    keep = [r for r in data["dependencies"] if re.split(r"[<>=!~;\[ ]", r, maxsplit=1)[0].lower() not in WEBHOOK_ONLY]
    return data["version"], keep


def krew_platform(tag: str) -> tuple[str, str]:
    """krew's (os, arch) for a wheel platform tag."""
    for pattern, platform in KREW_PLATFORMS:
        if re.match(pattern, tag):
            return platform
    raise SystemExit(f"no krew platform known for {tag!r}")


def pip(*args: str) -> None:
    subprocess.run([sys.executable, "-m", "pip", "--disable-pip-version-check", "--quiet", *args], check=True)


def populate(site: Path, requirements: list[str], platform: str | None, python_version: str | None,
             wheel_dir: Path) -> None:
    """The plugin's package and dependencies, installed into ``site`` for the target platform."""
    target = ["--target", str(site), "--no-compile", "--upgrade"]
    if platform or python_version:
        target += ["--only-binary=:all:", "--implementation", "cp"]
        if platform:
            target += ["--platform", platform]
        if python_version:
            target += ["--python-version", python_version]
    pip("wheel", "--no-deps", "--wheel-dir", str(wheel_dir), str(REPO))
    (wheel,) = wheel_dir.glob("kubectl_dra-*.whl")
    pip("install", *target, *requirements)
    pip("install", *target, "--no-deps", str(wheel))
    shutil.rmtree(site / "webhook", ignore_errors=True)  # the plugin does not serve admission
    shutil.rmtree(site / "bin", ignore_errors=True)  # console scripts for the build machine


def build_zipapp(site: Path, output: Path, build: Path) -> None:
    """shiv, installed into the build directory (not the project's environment), makes the file."""
    tools = build / "tools"
    if not (tools / "shiv").exists():
        pip("install", "--target", str(tools), SHIV)
    env = {**os.environ, "PYTHONPATH": str(tools)}
    subprocess.run([sys.executable, "-m", "shiv", "--site-packages", str(site), "--entry-point", ENTRY_POINT,
                    "--python", "/usr/bin/env python3", "--output-file", str(output), "--reproducible",
                    "--compressed", "--no-modify"], check=True, env=env)


def archive(plugin: Path, out: Path, os_name: str, arch: str) -> Path:
    """The krew archive: the plugin file (``kubectl-dra``, ``.exe`` naming aside) and the README."""
    path = out / f"kubectl-dra_{os_name}_{arch}.tar.gz"
    with tarfile.open(path, "w:gz") as tar:
        tar.add(plugin, arcname="kubectl-dra")
        tar.add(REPO / "README.md", arcname="README.md")
    return path


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def manifest(out: Path, version: str, base_url: str) -> Path:
    """The krew manifest, with one platform entry per archive in ``out``."""
    template = (REPO / "krew" / "dra.yaml").read_text()
    entries = []
    for path in sorted(out.glob("kubectl-dra_*_*.tar.gz")):
        os_name, arch = path.name[len("kubectl-dra_"):-len(".tar.gz")].split("_")
        entries.append(
            f"  - selector:\n      matchLabels:\n        os: {os_name}\n        arch: {arch}\n"
            f"    uri: {base_url.rstrip('/')}/v{version}/{path.name}\n    sha256: {sha256(path)}\n"
            f"    bin: kubectl-dra\n")
    text = template.replace("{{VERSION}}", version).replace("{{PLATFORMS}}\n", "".join(entries))
    result = out / "dra.yaml"
    result.write_text(text)
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=REPO / "dist", help="output directory (default: dist/)")
    parser.add_argument("--platform", help="wheel platform tag to build for (default: this machine)")
    parser.add_argument("--python-version", help="CPython version to build for, e.g. 3.12 (default: this one)")
    parser.add_argument("--build-dir", type=Path, help="scratch directory (default: build/plugin/<platform>-py<version>)")
    parser.add_argument("--base-url", default="https://github.com/kubectl-dra/kubectl-dra/releases/download",
                        help="where the archives are published (the manifest's uri prefix)")
    args = parser.parse_args(argv)
    version, requirements = project()
    tag = args.platform or sysconfig.get_platform().replace("-", "_").replace(".", "_")
    os_name, arch = krew_platform(tag)
    python = args.python_version or f"{sys.version_info.major}.{sys.version_info.minor}"
    build = args.build_dir or REPO / "build" / "plugin" / f"{tag}-py{python}"
    shutil.rmtree(build / "site", ignore_errors=True)
    shutil.rmtree(build / "wheel", ignore_errors=True)
    args.out.mkdir(parents=True, exist_ok=True)
    populate(build / "site", requirements, args.platform, args.python_version, build / "wheel")
    cross = bool(args.platform or args.python_version)
    plugin = args.out / (f"kubectl-dra-{os_name}-{arch}-py{python}" if cross else "kubectl-dra")
    build_zipapp(build / "site", plugin, build)
    packed = archive(plugin, args.out, os_name, arch)
    written = manifest(args.out, version, args.base_url)
    print(f"built {plugin} ({plugin.stat().st_size / 1e6:.1f} MB, CPython {python}, {os_name}/{arch}), "
          f"{packed.name}, {written.name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
