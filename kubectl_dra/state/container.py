"""Read device metadata files: from a local directory, single files, or inside a running
container through ``kubectl exec`` (so kubeconfig, context and auth plugins behave exactly
as the user's kubectl does)."""

from __future__ import annotations

import os
import posixpath
import re
import shutil
import stat
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from ..errors import ClusterAccessError, InputError
from ..limits import MAX_WALK_ENTRIES, MAX_WALK_FILE_BYTES, MAX_WALK_TOTAL_BYTES
from ..metadata.protocol import CONTAINER_DIR


@dataclass(frozen=True)
class MetadataFile:
    """One file as read: ``path`` is where it was found (in-container or local)."""

    path: str
    text: str


def read_directory(directory: str, warn: Callable[[str], None] | None = None) -> list[MetadataFile]:
    """Every regular text file below ``directory`` (a copy of the metadata directory), sorted.

    A file that is not UTF-8 text (a stray binary, an editor's swap file), is larger than
    :data:`~kubectl_dra.limits.MAX_WALK_FILE_BYTES` or cannot be read is skipped with a warning
    through ``warn``, and the others are still read. Only regular files are opened (never a
    device, a FIFO or a socket, which could be read forever); files that report no size (as in
    /proc and /sys) are not read at all; the walk stops with an error past
    :data:`~kubectl_dra.limits.MAX_WALK_ENTRIES` entries (``--dir /`` is no metadata directory)."""
    root = Path(directory)
    if not root.is_dir():
        raise InputError(f"--dir {directory}: not a directory")
    files: list[MetadataFile] = []
    entries = skipped = total = 0
    inside = os.path.realpath(root)
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        entries += len(dirnames) + len(filenames)
        if entries > MAX_WALK_ENTRIES:
            raise InputError(f"--dir {directory}: more than {MAX_WALK_ENTRIES:,} files and directories below it; "
                             "point --dir at a copy of the metadata directory")
        for name in sorted(filenames):
            full = Path(dirpath) / name
            try:
                info = full.stat()
                leaves = full.is_symlink() and os.path.commonpath([inside, os.path.realpath(full)]) != inside
            except (OSError, ValueError):
                skipped += 1  # a dangling link
                continue
            if not stat.S_ISREG(info.st_mode) or leaves:
                skipped += 1
                continue
            total += info.st_size
            if total > MAX_WALK_TOTAL_BYTES:
                raise InputError(f"--dir {directory}: more than {MAX_WALK_TOTAL_BYTES // (1024 * 1024)} MiB of files "
                                 "below it; point --dir at a copy of the metadata directory")
            try:
                files.append(MetadataFile(str(full), _read_text(full, info.st_size)))
            except InputError as exc:
                if warn is not None:
                    warn(f"skipped {exc.message}")
    if skipped and warn is not None:
        warn(f"skipped {skipped} entr{'y' if skipped == 1 else 'ies'} below {directory} that "
             f"{'is' if skipped == 1 else 'are'} not regular files (devices, FIFOs, sockets, links out of it or dangling)")
    return files


def read_files(paths: list[str]) -> list[MetadataFile]:
    """The named files, in order."""
    out = []
    for p in paths:
        path = Path(p)
        if not path.is_file():
            raise InputError(f"-f {p}: no such file")
        out.append(MetadataFile(p, _read_text(path)))
    return out


def _read_text(path: Path, size: int | None = None) -> str:
    """The file's text; unreadable, oversized or non-UTF-8 files are an :class:`InputError`
    naming them. With ``size`` (from the walk's stat), a file reporting 0 bytes is not opened
    (a /proc file may never end) and at most :data:`MAX_WALK_FILE_BYTES` are read."""
    if size == 0:
        return ""
    if size is not None and size > MAX_WALK_FILE_BYTES:
        raise InputError(f"{path}: larger than {MAX_WALK_FILE_BYTES // (1024 * 1024)} MiB, the most kubectl-dra "
                         "reads from one metadata file")
    try:
        if size is None:
            data = path.read_bytes()
        else:
            fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
            with os.fdopen(fd, "rb") as stream:
                data = stream.read(MAX_WALK_FILE_BYTES + 1)
            if len(data) > MAX_WALK_FILE_BYTES:
                raise InputError(f"{path}: larger than {MAX_WALK_FILE_BYTES // (1024 * 1024)} MiB, the most "
                                 "kubectl-dra reads from one metadata file")
    except OSError as exc:
        raise InputError(f"{path}: cannot read: {exc.strerror or exc}") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"{path}: not a JSON text file (invalid UTF-8 at byte {exc.start})") from None


@dataclass(frozen=True)
class ExecTarget:
    """Which container to read from, and how to reach the cluster."""

    pod: str
    namespace: str | None = None
    container: str | None = None
    context: str | None = None
    kubeconfig: str | None = None
    kubectl: str = "kubectl"
    timeout: float = 60.0

    def command(self, *args: str) -> list[str]:
        cmd = [self.kubectl]
        if self.kubeconfig:
            cmd += ["--kubeconfig", self.kubeconfig]
        if self.context:
            cmd += ["--context", self.context]
        if self.namespace:
            cmd += ["-n", self.namespace]
        cmd += ["exec", self.pod]
        if self.container:
            cmd += ["-c", self.container]
        return cmd + ["--", *args]


def _run(target: ExecTarget, *args: str) -> subprocess.CompletedProcess[str]:
    if shutil.which(target.kubectl) is None:
        raise ClusterAccessError(f"{target.kubectl!r} not found on PATH: it is needed to read files from pod/{target.pod}")
    try:
        return subprocess.run(target.command(*args), capture_output=True, text=True, timeout=target.timeout,
                              stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        raise ClusterAccessError(f"pod/{target.pod}: kubectl exec timed out after {target.timeout:.0f}s") from None


#: longest part of kubectl's stderr quoted in an error
_MAX_QUOTED = 300


def _first_line(text: str) -> str:
    """The line of kubectl's stderr that says what went wrong: its ``error:`` / ``Error from
    server`` line, else the first line that is not markup (an HTML error page from a proxy
    ends with ``</html>``, which says nothing), else the first line."""
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    if not lines:
        return "no output"
    chosen = next((line for line in lines if line.lower().startswith(("error", "unable to", "fatal"))), None)
    if chosen is None:
        title = re.search(r"<title>([^<]+)</title>", text, re.IGNORECASE)
        markup = title.group(1).strip() if title else lines[0]
        chosen = next((line for line in lines if not line.startswith("<")), markup)
    return chosen if len(chosen) <= _MAX_QUOTED else chosen[:_MAX_QUOTED] + "…"


def read_container(target: ExecTarget, base: str = CONTAINER_DIR) -> list[MetadataFile]:
    """Every file below ``base`` inside the container (empty when the directory is absent)."""
    listing = _run(target, "find", base, "-type", "f")
    if listing.returncode != 0:
        err = listing.stderr or listing.stdout
        if "No such file or directory" in err and base in err:
            return []
        if "executable file not found" in err or "not found" in _first_line(err).lower() and "find" in err:
            raise ClusterAccessError(
                f"pod/{target.pod}: the container has no `find`; copy the files out with "
                f"`kubectl cp {target.pod}:{base} ./metadata` and use --dir ./metadata"
            )
        raise ClusterAccessError(f"pod/{target.pod}: kubectl exec failed: {_first_line(err)}")
    files: list[MetadataFile] = []
    for path in sorted(p.strip() for p in listing.stdout.splitlines() if p.strip()):
        result = _run(target, "cat", path)
        if result.returncode != 0:
            raise ClusterAccessError(f"pod/{target.pod}: cannot read {path}: {_first_line(result.stderr)}")
        files.append(MetadataFile(posixpath.normpath(path), result.stdout))
    return files
