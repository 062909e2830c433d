"""The terminal tools against faulty servers: `--timeout`, one-line errors, a bad answer isolated to its
skill (`pull`, `check`), cut output, and the over-limit warning of `cat` (issue 10 item 7, issue 11
items 4, 5, 10, 11)."""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from servers import free_port, running_http_server
from servers.faulty_server import uri
from servers.hostile_server import HostileServer, running_hostile_server
from skillwire.cli.output import PRINT_LIMIT, printable
from support.cli import run_cli
from support.peak_rss import run_measured

FAULTY = Path(__file__).resolve().parents[1] / "servers" / "faulty_server.py"
STDIO = ["--", sys.executable, str(FAULTY), "--stdio"]


@pytest.fixture(scope="module")
def faulty_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    port = free_port()
    argv = [sys.executable, str(FAULTY), "--port", str(port), "--wordy-mb", "10"]
    with running_http_server(argv, port, tmp_path_factory.mktemp("faulty") / "server.out"):
        yield f"http://127.0.0.1:{port}/mcp"


def one_line_error(err: str) -> str:
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1, err
    assert "Traceback" not in err
    return lines[0]


@pytest.mark.parametrize(
    "args",
    [
        ["ls", "--timeout", "1", *STDIO, "--listing", "hang"],
        ["get", "good", "--timeout", "1", *STDIO, "--listing", "hang"],
        ["pull", "--to", "{dir}", "--timeout", "1", *STDIO, "--listing", "hang"],
        ["cat", uri("hang-read"), "--timeout", "1", *STDIO],
    ],
    ids=["ls", "get", "pull", "cat"],
)
def test_every_command_gives_up_on_a_hung_stdio_server_after_its_timeout(args: list[str], tmp_path: Path) -> None:
    start = time.monotonic()
    result = run_cli(*[a.replace("{dir}", str(tmp_path / "out")) for a in args])
    assert time.monotonic() - start < 10
    assert result.code == 1
    assert "within 1 s" in one_line_error(result.err)


def test_check_gives_up_on_a_hung_server_after_its_timeout(tmp_path: Path) -> None:
    start = time.monotonic()
    result = run_cli("check", "--timeout", "1", *STDIO, "--listing", "hang")
    assert time.monotonic() - start < 10
    assert result.code == 1
    assert "Traceback" not in result.err


def test_timeout_must_be_positive() -> None:
    result = run_cli("ls", "--timeout", "0", *STDIO)
    assert result.code == 2
    assert "--timeout must be a positive number of seconds" in result.err


def test_pull_isolates_every_bad_answer_to_its_skill(faulty_url: str, tmp_path: Path) -> None:
    """One skill per fault (flood, no answer, broken connection, invalid result, not JSON): each fails with
    one line, the honest ones (and the Go SDK's empty file) are pulled."""
    dest = tmp_path / "pulled"
    result = run_cli("pull", "--to", str(dest), "--timeout", "2", "--json", faulty_url)
    assert result.code == 1
    assert "Traceback" not in result.err
    assert "validation error" not in result.err
    outcomes = {item["uri"]: item for item in json.loads(result.out)["skills"]}
    outcomes.pop(uri("wordy"))  # there for the printing tests below
    assert {u for u, o in outcomes.items() if o["status"] == "pulled"} == {uri("good"), uri("empty-file")}
    reasons = {u: o["error"] for u, o in outcomes.items() if o["status"] == "failed"}
    assert "over its bound of" in reasons[uri("huge-read")]
    assert "no answer to resources/read" in reasons[uri("hang-read")]
    assert "the connection broke during resources/read" in reasons[uri("die-read")]
    assert "not a valid MCP result" in reasons[uri("bad-block")]
    assert "not a JSON-RPC message" in reasons[uri("junk-line")]
    assert all("\n" not in reason for reason in reasons.values())
    assert (dest / "faulty" / "empty-file" / "empty.txt").read_bytes() == b""
    assert not (dest / "faulty" / "bad-block").exists()
    for line in result.err.splitlines():
        if line.startswith("["):  # a progress line ("[3/7] failed ..."): pull prints one per skill in a pipe
            continue
        assert line.startswith("skillwire: failed skill://faulty/"), line
        assert len(line) < 600


def test_check_isolates_bad_answers_to_their_skills(faulty_url: str) -> None:
    result = run_cli("check", "--timeout", "2", "--json", faulty_url)
    assert "Traceback" not in result.err
    findings = [json.loads(line) for line in result.out.splitlines()]
    flagged = {f["skill"] for f in findings if f.get("severity") == "failure"}
    assert {uri("huge-read"), uri("bad-block"), uri("hang-read")} <= flagged
    assert uri("good") not in flagged


@pytest.mark.parametrize("command", ["ls", "get"])
def test_a_ten_megabyte_description_prints_bounded(faulty_url: str, command: str) -> None:
    """Whether the host refuses the field (its bound) or shows it, what reaches the terminal is bounded."""
    args = [uri("wordy")] if command == "get" else []
    result = run_cli(command, *args, faulty_url)
    assert len(result.out) + len(result.err) < 6000
    assert "words words" not in result.err or len(result.err) < 2500


def test_printable_cuts_long_server_text_and_says_how_much() -> None:
    shown = printable("x" * 10_000_000)
    assert shown == "x" * PRINT_LIMIT + f"… [{10_000_000 - PRINT_LIMIT:,} more characters]"
    assert printable("short\x1b") == "short\\x1b"


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HostileServer]:
    with running_hostile_server(tmp_path_factory.mktemp("hostile")) as running:
        yield running


def test_cat_of_an_over_limit_skill_warns_as_the_host_refuses(hostile: HostileServer) -> None:
    result = run_cli("cat", "skill://hostile/too-many/SKILL.md", hostile.url)
    assert result.code == 0
    assert result.text.startswith("---\nname: too-many")
    warning = one_line_error(result.err)
    assert "has 513 files; the limit is 512 per skill" in warning
    assert "SkillHost" in warning


def test_ls_on_a_page_of_a_million_entries_is_refused_in_bounded_time_and_memory() -> None:
    """The issue's case with the default limits: one `skills/list` page of 1,000,000 entries (about 250 MB)
    took `ls` to 6 GB and 167 s. Now the page is refused at its 32 MiB bound: one line, exit 1."""
    start = time.monotonic()
    measured = run_measured([sys.executable, "-m", "skillwire.cli.main", "ls", *STDIO, "--listing", "huge-page"], 120)
    elapsed = time.monotonic() - start
    assert measured.code == 1
    assert "skills/list is over its bound of 33,554,432 bytes" in one_line_error(measured.err)
    assert elapsed < 60, elapsed
    assert measured.peak_rss_mib < 400, f"{measured.peak_rss_mib:.0f} MiB"
