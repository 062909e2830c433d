"""The client commands in scripts and CI: `check --json`'s summary record, `pull`'s progress lines in a
pipe and its Ctrl-C, one wording of connection failures for every command, skills named by name, and
close matches for a typo. Real servers on 127.0.0.1 (`skillwire serve`, a deliberately slow skills
server, and Python's own `http.server` as a URL that is not MCP); `pull` is interrupted with a real
SIGINT.
"""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from servers import free_port, running_http_server
from skillwire.core.manifest import sha256_digest
from support.cli import run_cli
from support.servers import EXAMPLES

SLOW_SERVER = Path(__file__).resolve().parents[1] / "servers" / "slow_server.py"
SLOW_SKILLS = 40
CLI = [sys.executable, "-m", "skillwire"]


@pytest.fixture(scope="module")
def slow_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """40 skills of 2 files; every read takes 50 ms, so pulling everything takes about 4 s."""
    port = free_port()
    argv = [sys.executable, str(SLOW_SERVER), "--port", str(port), "--skills", str(SLOW_SKILLS), "--delay", "0.05"]
    with running_http_server(argv, port, tmp_path_factory.mktemp("slow") / "server.log"):
        yield f"http://127.0.0.1:{port}/mcp"


@pytest.fixture(scope="module")
def not_mcp_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """Python's static file server: it answers POST with HTTP 501."""
    port = free_port()
    folder = tmp_path_factory.mktemp("static")
    argv = [sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1", "--directory", str(folder)]
    with running_http_server(argv, port, folder / "server.log"):
        yield f"http://127.0.0.1:{port}/"


# -- check --json ------------------------------------------------------------------------------------------------


def test_check_json_on_a_clean_server_is_one_summary_record(examples_url: str) -> None:
    result = run_cli("check", "--json", examples_url)
    assert result.code == 0, result.err
    records = [json.loads(line) for line in result.text.splitlines()]
    host = records[0].pop("host_limits")
    assert (host["host"], host["listed"], host["kept"], host["stopped"], host["dropped"]) == (
        "Claude Code 2.1.337",
        5,
        5,
        None,
        [],
    )
    assert host["kept_bytes"] == host["listed_bytes"] > 0
    assert records == [
        {
            "summary": True,
            "ok": True,
            "failures": 0,
            "warnings": 0,
            "skills": 5,
            "skills_without_findings": 5,
            "pages": 1,
            "files_read": 13,
            "directories_read": 13,
            "protocol_version": "2026-07-28",
        }
    ]


def test_check_json_summary_comes_last_and_counts_the_findings(tmp_path: Path) -> None:
    from servers import running_lying_server

    with running_lying_server(tmp_path) as lying:
        result = run_cli("check", "--json", lying.url)
    assert result.code == 1
    *findings, summary = [json.loads(line) for line in result.text.splitlines()]
    assert findings
    assert all("summary" not in f for f in findings)
    assert summary["summary"] is True
    assert summary["ok"] is False
    assert summary["failures"] == sum(f["severity"] == "failure" for f in findings)
    assert summary["warnings"] == sum(f["severity"] == "warning" for f in findings)


# -- one explanation of a connection failure ---------------------------------------------------------------------


def _error_line(*args: str) -> str:
    result = run_cli(*args)
    assert result.code == 1, result.err
    assert result.out == b""
    lines = result.err.strip().splitlines()
    assert len(lines) == 1, result.err
    return lines[-1].removeprefix("skillwire: ").removeprefix("failed ")


def test_every_command_explains_a_non_mcp_url_the_same_way(not_mcp_url: str, tmp_path: Path) -> None:
    expected = f"error: {not_mcp_url} answered HTTP 501; check the URL and the server's log"
    for args in (
        ("ls", not_mcp_url),
        ("check", not_mcp_url),
        ("check", "--json", not_mcp_url),
        ("get", "pdf-processing", not_mcp_url),
        ("cat", "skill://pdf-processing/SKILL.md", not_mcp_url),
        ("pull", "--to", str(tmp_path / "out"), not_mcp_url),
    ):
        line = _error_line(*args)
        assert line.startswith(expected), (args, line)
        assert "MCPError" not in line


def test_every_command_explains_a_closed_port_the_same_way(tmp_path: Path) -> None:
    url = f"http://127.0.0.1:{free_port()}/mcp"
    lines = {
        _error_line("ls", url),
        _error_line("check", url),
        _error_line("get", "x", url),
        _error_line("cat", "x", url),
        _error_line("pull", "--to", str(tmp_path / "out"), url),
    }
    assert len(lines) == 1, lines
    assert lines.pop().startswith(f"error: cannot connect to {url}")


# -- names -----------------------------------------------------------------------------------------------------


def test_cat_accepts_a_skill_name_like_get_and_pull(examples_url: str) -> None:
    forms = (EXAMPLES / "pdf-processing" / "references" / "FORMS.md").read_bytes()
    by_name = run_cli("cat", "pdf-processing/references/FORMS.md", examples_url)
    by_uri = run_cli("cat", "skill://pdf-processing/references/FORMS.md", examples_url)
    assert (by_name.code, by_name.out) == (0, forms), by_name.err
    assert by_uri.out == forms
    skill_md = run_cli("cat", "refunds", examples_url)  # a name alone is its SKILL.md, wherever it sits
    assert skill_md.out == (EXAMPLES / "acme" / "billing" / "refunds" / "SKILL.md").read_bytes()


@pytest.mark.parametrize(
    ("args", "suggestion"),
    [
        (("get", "pdf-procesing"), "did you mean 'pdf-processing'?"),
        (("get", "skill://pdf-procesing/SKILL.md"), "did you mean 'skill://pdf-processing/SKILL.md'?"),
        (("cat", "git-workflw"), "did you mean 'git-workflow'?"),
        (("cat", "pdf-processing/references/FORM.md"), "did you mean 'references/FORMS.md'?"),
        (("cat", "skill://pdf-processing/refrences/FORMS.md"), "did you mean 'references/FORMS.md'?"),
        (("pull", "--to", "{tmp}/out", "code-reveiw"), "did you mean 'code-review'?"),
    ],
)
def test_a_typo_suggests_the_close_match(
    examples_url: str, tmp_path: Path, args: tuple[str, ...], suggestion: str
) -> None:
    result = run_cli(*(a.format(tmp=tmp_path) for a in args), examples_url)
    assert result.code == 1
    assert result.out.strip() == b"" or result.out.startswith(b"pulled 0 of 1")
    assert suggestion in result.err, result.err
    assert result.err.count("did you mean") == 1


def test_no_suggestion_when_nothing_is_close(examples_url: str) -> None:
    result = run_cli("get", "zzzz", examples_url)
    assert result.code == 1
    assert "did you mean" not in result.err


# -- pull in a pipe, and Ctrl-C ----------------------------------------------------------------------------------


def test_pull_into_a_pipe_writes_each_result_line_as_it_goes(slow_url: str, tmp_path: Path) -> None:
    """In a pipe the result on stdout is written skill by skill (a log shows how far a long pull got), and
    nothing is said twice: no progress on stderr (issue 20)."""
    process = subprocess.Popen(
        [*CLI, "pull", "--to", str(tmp_path / "out"), slow_url],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
    )
    assert process.stderr is not None
    assert process.stdout is not None
    first = process.stdout.readline()
    first_seen = time.monotonic()
    rest, err = process.stdout.read(), process.stderr.read()
    done = time.monotonic()
    assert process.wait(timeout=60) == 0
    lines = [first, *rest.splitlines(keepends=True)]
    assert [line.split(" -> ")[0] for line in lines[:-1]] == [
        f"pulled skill://slow/s{n:02d}/SKILL.md" for n in range(SLOW_SKILLS)
    ]
    assert done - first_seen > 1.0  # the first line came long before the end, not all at once
    assert lines[-1].startswith(f"pulled {SLOW_SKILLS} of {SLOW_SKILLS} skills")
    assert err == ""


def test_ctrl_c_stops_pull_within_a_second_with_one_line_and_a_consistent_folder(slow_url: str, tmp_path: Path) -> None:
    dest = tmp_path / "out"
    process = subprocess.Popen(
        [*CLI, "pull", "--to", str(dest), slow_url],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
    )
    assert process.stdout is not None
    progress = [process.stdout.readline() for _ in range(5)]
    assert all(line.startswith("pulled skill://slow/") for line in progress), progress
    started = time.monotonic()
    process.send_signal(signal.SIGINT)
    _out, err = process.communicate(timeout=10)
    elapsed = time.monotonic() - started
    assert elapsed < 1.0, f"pull took {elapsed:.2f} s to exit after Ctrl-C"
    assert process.returncode == 130
    lines = err.strip().splitlines()
    assert len(lines) == 1, err  # only the summary: progress is never on stderr in a pipe
    assert "Traceback" not in err
    match = re.fullmatch(
        rf"skillwire: interrupted: (\d+) of {SLOW_SKILLS} skills pulled; run again to finish", lines[-1]
    )
    assert match is not None, err
    pulled = int(match.group(1))
    assert 5 <= pulled < SLOW_SKILLS

    # Consistent: the lock names exactly the skills on disk, each complete and verified; no staging left.
    lock = json.loads((dest / "skills.lock").read_text())
    assert len(lock["skills"]) == pulled
    on_disk = sorted(p.name for p in (dest / "slow").iterdir())
    assert on_disk == sorted(Path(s["path"]).name for s in lock["skills"])
    for skill in lock["skills"]:
        for item in skill["files"]:
            data = (dest / skill["path"] / item["path"]).read_bytes()
            assert sha256_digest(data) == item["digest"]
    assert sorted(p.name for p in dest.iterdir()) == ["skills.lock", "slow"]

    again = run_cli("pull", "--to", str(dest), slow_url)
    assert again.code == 0, again.err
    assert len(json.loads((dest / "skills.lock").read_text())["skills"]) == SLOW_SKILLS
