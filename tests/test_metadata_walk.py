"""``metadata --dir`` reads regular files only, within bounds (issue 23): device files, FIFOs
and links out of the directory are never opened, files that report no size (/proc) are not read,
and a walk over a whole file system stops with an error instead of running for ever."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from kubectl_dra.state import container
from kubectl_dra.state.container import read_directory
from tests.cli_support import run


def test_a_fifo_and_a_device_are_skipped_not_read(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe-metadata.json")  # opening it for reading would block for ever
    (tmp_path / "zero-metadata.json").symlink_to("/dev/zero")  # reading it would never end
    (tmp_path / "ok-metadata.json").write_text("{}")
    warnings: list[str] = []
    files = read_directory(str(tmp_path), warnings.append)
    assert [Path(f.path).name for f in files] == ["ok-metadata.json"]
    assert any("2 entries" in w and "not regular files" in w for w in warnings)


def test_links_inside_the_directory_are_followed_and_out_of_it_are_not(tmp_path: Path) -> None:
    outside = tmp_path / "outside.json"
    outside.write_text('{"secret": 1}')
    root = tmp_path / "meta"
    (root / "data").mkdir(parents=True)
    (root / "data" / "a-metadata.json").write_text("{}")
    (root / "a-metadata.json").symlink_to(root / "data" / "a-metadata.json")  # as a projected volume does
    (root / "b-metadata.json").symlink_to(outside)
    files = read_directory(str(root))
    assert sorted(Path(f.path).name for f in files) == ["a-metadata.json", "a-metadata.json"]


def test_proc_style_files_of_no_size_are_not_opened(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "empty-metadata.json").write_text("")
    opened: list[str] = []
    real_open = os.open
    monkeypatch.setattr(container.os, "open", lambda path, *a, **k: (opened.append(str(path)), real_open(path, *a, **k))[1])
    files = read_directory(str(tmp_path))
    assert [f.text for f in files] == [""] and opened == []


def test_an_oversized_file_is_skipped_with_a_warning(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(container, "MAX_WALK_FILE_BYTES", 10)
    (tmp_path / "big-metadata.json").write_text("{" + " " * 20 + "}")
    warnings: list[str] = []
    assert read_directory(str(tmp_path), warnings.append) == []
    assert "larger than" in warnings[0]


@pytest.mark.parametrize("bound,value", [("MAX_WALK_ENTRIES", 5), ("MAX_WALK_TOTAL_BYTES", 30)])
def test_a_walk_past_its_bounds_is_an_input_error(tmp_path: Path, capsys, monkeypatch: pytest.MonkeyPatch,
                                                  bound: str, value: int) -> None:
    monkeypatch.setattr(container, bound, value)
    for i in range(10):
        (tmp_path / f"f{i}-metadata.json").write_text("{}" + " " * 8)
    code, _, err = run(capsys, "metadata", "--dir", str(tmp_path))
    assert code == 2 and err.count("error:") == 1 and "point --dir at a copy" in err, err


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="needs /proc")
def test_metadata_dir_proc_ends(capsys) -> None:
    code, _, err = run(capsys, "metadata", "--dir", "/proc")
    assert code in (0, 2) and "internal error" not in err
