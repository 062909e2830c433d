"""`support.apt_tool`: a tool on PATH (or in a system folder) is used as found; without it and without
apt-get, the test is skipped with one line naming the tool and the package. Nothing is installed here:
PATH points at a folder of this test's own, so apt-get is never found."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from support.apt_tool import apt_tool


def _executable(path: Path) -> Path:
    path.write_text("#!/bin/sh\n")
    path.chmod(0o755)
    return path


def test_a_tool_on_path_is_used_as_found(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    tool = _executable(tmp_path / "some-daemon")
    monkeypatch.setenv("PATH", str(tmp_path))
    assert apt_tool("some-daemon", also_in=()) == str(tool)


def test_a_tool_in_a_system_folder_off_path_is_found(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    sbin = tmp_path / "sbin"
    sbin.mkdir()
    tool = _executable(sbin / "some-daemon")
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    assert apt_tool("some-daemon", also_in=[str(sbin)]) == str(tool)


def test_without_the_tool_or_apt_the_test_is_skipped_naming_both(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "not-executable").write_text("")
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(pytest.skip.Exception) as skipped:
        apt_tool("not-executable", "its-package", also_in=(os.fspath(tmp_path),))
    assert str(skipped.value) == (
        "no not-executable binary, and `apt-get install its-package` was not possible (not root or no apt)"
    )
