"""Build the one-file kubectl plugin: ``dist/kubectl-dra`` (a launcher) with one zipapp per
supported CPython version beside it, a krew archive of them, and the krew manifest pointing at
that archive.

Each zipapp (``kubectl-dra-py3.12.pyz``, ...) is made with shiv (https://github.com/linkedin/shiv):
the plugin's packages and its runtime dependencies (``pyproject.toml``'s dependencies; the
webhook's are an extra) go into the file, and on first run shiv unpacks them once into
``~/.shiv`` (``SHIV_ROOT`` overrides), because native extension modules (cel-expr-python,
protobuf, PyYAML, orjson) cannot be imported from inside a zip, and they are built for one
CPython version. The launcher (:data:`LAUNCHER`, standard library only) runs the zipapp made
for the ``python3`` it runs on, so the plugin works with whichever supported python3 the
machine has; on an unsupported one it says which versions are and exits 2 before anything
else is imported. A zipapp started directly by the wrong python3 says the same (its preamble
runs before any native module is imported).

Usage::

    python packaging/build_plugin.py                    # this machine's platform, every supported Python
    python packaging/build_plugin.py --python-version 3.12          # one version only
    python packaging/build_plugin.py --platform macosx_11_0_arm64

Other platforms are built on any machine with pip's ``--platform``/``--python-version``
(binary wheels only: cel-expr-python has none for Linux arm64). Windows builds, but kubectl
runs plugins there only as .exe/.cmd files. Needs the package index (pip downloads the
dependencies and shiv). The manifest needs the project's homepage and release URL
(``--homepage``/``--base-url``, default ``[project.urls]`` Homepage and Releases); without
them no manifest is written.
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
ENTRY_POINT = "kubectl_dra.cli.main:main"
#: CPython versions a plugin is built for by default: every one the project supports that has
#: binary wheels of all the native dependencies
SUPPORTED_PYTHONS = ("3.11", "3.12", "3.13")
#: the launcher: ``kubectl-dra`` runs ``kubectl-dra-py<X.Y>.pyz`` beside it with the python3 it runs on
LAUNCHER = """#!/usr/bin/env python3
# kubectl-dra launcher: runs the zipapp built for this python3 (standard library only)
import os
import sys

here = os.path.dirname(os.path.realpath(__file__))
version = "%d.%d" % sys.version_info[:2]
app = os.path.join(here, "kubectl-dra-py%s.pyz" % version)
if not os.path.exists(app):
    built = sorted(name[len("kubectl-dra-py"):-len(".pyz")] for name in os.listdir(here)
                   if name.startswith("kubectl-dra-py") and name.endswith(".pyz"))
    sys.stderr.write("error: kubectl-dra has no build for Python %s (%s); it runs on Python %s: put one of "
                     "those first on PATH as python3\\n" % (version, sys.executable, ", ".join(built) or "none"))
    sys.exit(2)
sys.argv[0] = app
os.execv(sys.executable, [sys.executable, app] + sys.argv[1:])
"""
#: shiv's preamble for a zipapp: runs before the entry point imports any native module
PREAMBLE = """import sys

BUILT_FOR = %r
if "%%d.%%d" %% sys.version_info[:2] != BUILT_FOR:
    sys.stderr.write("error: this kubectl-dra zipapp is built for Python %%s, not %%d.%%d (%%s); run it with "
                     "python%%s, or use the kubectl-dra launcher beside it\\n"
                     %% ((BUILT_FOR,) + tuple(sys.version_info[:2]) + (sys.executable, BUILT_FOR)))
    sys.exit(2)
"""
SHIV = "shiv>=1.0.8,<2"
#: pip/wheel platform tag prefix -> (krew os, krew arch)
KREW_PLATFORMS = (
    (r"^(manylinux|musllinux|linux).*x86_64$", ("linux", "amd64")),
    (r"^(manylinux|musllinux|linux).*aarch64$", ("linux", "arm64")),
    (r"^macosx.*arm64$", ("darwin", "arm64")),
    (r"^macosx.*x86_64$", ("darwin", "amd64")),
    (r"^win_amd64$", ("windows", "amd64")),
)


def project() -> tuple[str, list[str], dict[str, str]]:
    """The project's version, the plugin's runtime requirements (the webhook's are an extra) and
    its URLs, from pyproject.toml."""
    data = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    return data["version"], list(data["dependencies"]), dict(data.get("urls") or {})


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


def build_zipapp(site: Path, output: Path, build: Path, python: str) -> None:
    """shiv, installed into the build directory (not the project's environment), makes the file;
    its preamble refuses a python3 of another version before any native module is imported."""
    tools = build / "tools"
    if not (tools / "shiv").exists():
        pip("install", "--target", str(tools), SHIV)
    preamble = build / "preamble.py"
    preamble.write_text(PREAMBLE % python)
    env = {**os.environ, "PYTHONPATH": str(tools)}
    subprocess.run([sys.executable, "-m", "shiv", "--site-packages", str(site), "--entry-point", ENTRY_POINT,
                    "--python", "/usr/bin/env python3", "--output-file", str(output), "--reproducible",
                    "--compressed", "--no-modify", "--preamble", str(preamble)], check=True, env=env)


def write_launcher(out: Path) -> Path:
    """``kubectl-dra``: the launcher that picks the zipapp for the python3 it runs on."""
    path = out / "kubectl-dra"
    path.write_text(LAUNCHER)
    path.chmod(0o755)
    return path


def archive(launcher: Path, apps: list[Path], out: Path, os_name: str, arch: str) -> Path:
    """The krew archive: the launcher (``kubectl-dra``), a zipapp per Python version, the
    LICENSE and the README."""
    path = out / f"kubectl-dra_{os_name}_{arch}.tar.gz"
    with tarfile.open(path, "w:gz") as tar:
        tar.add(launcher, arcname="kubectl-dra")
        for app in apps:
            tar.add(app, arcname=app.name)
        tar.add(REPO / "LICENSE", arcname="LICENSE")
        tar.add(REPO / "README.md", arcname="README.md")
    return path


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def manifest(out: Path, version: str, base_url: str, homepage: str) -> Path:
    """The krew manifest, with one platform entry per archive in ``out``."""
    template = (REPO / "krew" / "dra.yaml").read_text()
    entries = []
    for path in sorted(out.glob("kubectl-dra_*_*.tar.gz")):
        os_name, arch = path.name[len("kubectl-dra_"):-len(".tar.gz")].split("_")
        entries.append(
            f"  - selector:\n      matchLabels:\n        os: {os_name}\n        arch: {arch}\n"
            f"    uri: {base_url.rstrip('/')}/v{version}/{path.name}\n    sha256: {sha256(path)}\n"
            f"    bin: kubectl-dra\n")
    text = (template.replace("{{VERSION}}", version).replace("{{HOMEPAGE}}", homepage)
            .replace("{{PLATFORMS}}\n", "".join(entries)))
    result = out / "dra.yaml"
    result.write_text(text)
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    version, requirements, urls = project()
    parser.add_argument("--out", type=Path, default=REPO / "dist", help="output directory (default: dist/)")
    parser.add_argument("--platform", help="wheel platform tag to build for (default: this machine)")
    parser.add_argument("--python-version", action="append", dest="pythons", metavar="X.Y",
                        help=f"CPython version to build for, repeatable (default: {', '.join(SUPPORTED_PYTHONS)})")
    parser.add_argument("--build-dir", type=Path, help="scratch directory (default: build/plugin/<platform>)")
    parser.add_argument("--homepage", default=urls.get("Homepage"), help="the manifest's homepage "
                        "(default: [project.urls] Homepage)")
    parser.add_argument("--base-url", default=urls.get("Releases"),
                        help="where the archives are published, the manifest's uri prefix (default: "
                        "[project.urls] Releases)")
    args = parser.parse_args(argv)
    tag = args.platform or sysconfig.get_platform().replace("-", "_").replace(".", "_")
    os_name, arch = krew_platform(tag)
    build = args.build_dir or REPO / "build" / "plugin" / tag
    args.out.mkdir(parents=True, exist_ok=True)
    here = f"{sys.version_info.major}.{sys.version_info.minor}"
    apps = []
    for python in args.pythons or SUPPORTED_PYTHONS:
        site, wheels = build / f"py{python}" / "site", build / f"py{python}" / "wheel"
        shutil.rmtree(site, ignore_errors=True)
        shutil.rmtree(wheels, ignore_errors=True)
        populate(site, requirements, args.platform, None if python == here and not args.platform else python, wheels)
        app = args.out / f"kubectl-dra-py{python}.pyz"
        build_zipapp(site, app, build / f"py{python}", python)
        apps.append(app)
    launcher = write_launcher(args.out)
    packed = archive(launcher, apps, args.out, os_name, arch)
    print(f"built {launcher} with {', '.join(a.name for a in apps)} ({os_name}/{arch}), {packed.name}")
    if not (args.homepage and args.base_url):
        print("no krew manifest written: give --homepage and --base-url (or [project.urls] Homepage and "
              "Releases in pyproject.toml)")
        return 0
    written = manifest(args.out, version, args.base_url, args.homepage)
    print(f"wrote {written}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
