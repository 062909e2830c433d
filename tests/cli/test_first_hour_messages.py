"""Four of the command-line messages a new user hit (issue 20, first-hour list), run in-process as typed.

The fifth, `pull` in a pipe, needs a server: tests/e2e/test_cli_pull.py (`test_pull_plain_output`) and
tests/e2e/test_cli_scripting.py; `get`/`ls` and signatures: tests/e2e/test_signing.py.
"""

from __future__ import annotations

import re
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from skillwire.core.names import name_problem
from support.cli import run_cli


@pytest.mark.parametrize(
    ("typed", "meant"),
    [
        ("127.0.0.1:8765/mcp", "http://127.0.0.1:8765/mcp"),
        ("localhost:8765/mcp", "http://localhost:8765/mcp"),
        ("[::1]:8765/mcp", "http://[::1]:8765/mcp"),
        ("skills.example.com/mcp", "https://skills.example.com/mcp"),
    ],
)
def test_an_address_without_a_scheme_suggests_the_url(typed: str, meant: str) -> None:
    result = run_cli("ls", typed)
    assert result.code == 2
    assert result.err.strip() == f"skillwire: {typed!r} has no scheme; did you mean {meant}?"
    assert "stdio" not in result.err


@pytest.mark.parametrize("typed", ["python", "server.py", "scripts/serve"])
def test_a_command_without_the_double_dash_still_gets_the_stdio_advice(typed: str) -> None:
    result = run_cli("ls", typed)
    assert result.code == 2
    assert f"for a stdio server write `-- {typed} ...` at the end" in result.err
    assert "did you mean" not in result.err


def write_skill(folder: Path, name: str) -> None:
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(f"---\nname: {name}\ndescription: Works on PDFs.\n---\nBody.\n")


def suggested_names(text: str) -> list[str]:
    """Every name a `suggestion:` line offers: `'name: X'` and `the folder to 'X'`."""
    found: list[str] = []
    for line in text.splitlines():
        if line.strip().startswith("suggestion:"):
            found += re.findall(r"'name: ([^']*)'", line) + re.findall(r"folder to '([^']*)'", line)
    return found


@pytest.mark.parametrize(
    ("folder", "name"),
    [
        ("pdf-tools", "PDF_Tools"),  # the name is invalid, the folder is not
        ("PDF Tools", "pdf-tools"),  # the folder is invalid, the name is not
        ("PDF Tools", "PDF_Tools"),  # neither is valid
        ("Über Tool", "über-tool"),  # not ASCII
    ],
)
def test_lint_suggests_only_names_that_pass_the_name_rule(tmp_path: Path, folder: str, name: str) -> None:
    write_skill(tmp_path / folder, name)
    result = run_cli("lint", str(tmp_path))
    assert result.code == 1, result.text
    offered = suggested_names(result.text)
    assert offered, result.text
    assert [n for n in offered if name_problem(n) is not None] == [], result.text


@pytest.fixture
def taken_port() -> Iterator[int]:
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        yield holder.getsockname()[1]


def test_an_empty_folder_on_a_taken_port_says_both(tmp_path: Path, taken_port: int) -> None:
    result = run_cli("serve", str(tmp_path), "--http", f"127.0.0.1:{taken_port}")
    assert result.code == 2
    assert result.err.splitlines() == [
        f"skillwire: no SKILL.md found under {tmp_path} (--allow-empty serves it anyway)",
        f"skillwire: port {taken_port} is already in use on 127.0.0.1; pick another with --http 127.0.0.1:PORT",
    ]


def test_a_folder_with_skills_on_a_taken_port_says_only_the_port(tmp_path: Path, taken_port: int) -> None:
    write_skill(tmp_path / "pdf-tools", "pdf-tools")
    result = run_cli("serve", str(tmp_path), "--http", f"127.0.0.1:{taken_port}")
    assert result.code == 1
    assert result.err.splitlines() == [
        f"skillwire: port {taken_port} is already in use on 127.0.0.1; pick another with --http 127.0.0.1:PORT"
    ]
