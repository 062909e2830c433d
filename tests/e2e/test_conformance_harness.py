"""Tests of tests/support/conformance.py itself, independent of skillwire's own server and client.

The `conformance`-marked tests run the real suite (Node 22 from `scripts/install-tools`) against tiny
clients written here, and skip when the tools are not installed. The others check the parsing on
canned suite output and need nothing.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from support.conformance import (
    FAILURE,
    SKIPPED,
    SUCCESS,
    WARNING,
    ConformanceTimeoutError,
    ConformanceToolsMissingError,
    missing_tools_reason,
    node_binary,
    parse_checks_json,
    parse_pretty_output,
    run_client_scenario,
    run_server_scenario,
)

NO_PREFETCH = "sep-2640-client-no-prefetch"
NO_PREFETCH_CHECK = "sep-2640-host-no-prefetch"

# A minimal host built on the official SDK: list skills over Streamable HTTP and, with --read,
# fetch a skill file straight away (exactly the prefetch no-prefetch forbids).
CLIENT_SCRIPT = textwrap.dedent(
    """
    import asyncio
    import sys
    from typing import Any, Literal

    from mcp import types
    from mcp.client import Client


    class ListSkillsRequest(types.PaginatedRequest[Literal["skills/list"]]):
        method: Literal["skills/list"] = "skills/list"


    class ListSkillsResult(types.PaginatedResult):
        skills: list[dict[str, Any]]


    async def main(url: str, read: bool) -> None:
        async with Client(url) as client:
            listed = await client.session.send_request(ListSkillsRequest(), ListSkillsResult)
            print("listed", *(skill["uri"] for skill in listed.skills))
            if read:
                await client.read_resource("skill://pdf-processing/SKILL.md")
                print("read skill://pdf-processing/SKILL.md")


    asyncio.run(main(sys.argv[-1], "--read" in sys.argv[1:-1]))
    """
)


@pytest.fixture
def suite_installed() -> None:
    reason = missing_tools_reason()
    if reason is not None:
        pytest.skip(reason)


@pytest.fixture
def client_script(tmp_path: Path) -> Path:
    script = tmp_path / "list_skills_client.py"
    script.write_text(CLIENT_SCRIPT, encoding="utf-8")
    return script


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


# --------------------------------------------------------------------------------------------------
# Against the real suite
# --------------------------------------------------------------------------------------------------


@pytest.mark.conformance
@pytest.mark.usefixtures("suite_installed")
def test_listing_only_client_passes_no_prefetch(client_script: Path) -> None:
    run = run_client_scenario([sys.executable, str(client_script)], NO_PREFETCH)

    assert run.status_of(NO_PREFETCH_CHECK) == SUCCESS, run.summary()
    assert run.ok, run.summary()
    assert run.exit_code == 0
    assert run.results_source == "checks.json"
    assert run.check(NO_PREFETCH_CHECK).details == {"skillsListCalled": True, "fileReads": 0}
    assert run.client_stdout is not None
    assert "skill://pdf-processing/SKILL.md" in run.client_stdout


@pytest.mark.conformance
@pytest.mark.usefixtures("suite_installed")
def test_prefetching_client_fails_no_prefetch(client_script: Path) -> None:
    run = run_client_scenario([sys.executable, str(client_script), "--read"], NO_PREFETCH)

    assert run.status_of(NO_PREFETCH_CHECK) == FAILURE, run.summary()
    assert not run.ok
    assert run.exit_code == 1
    assert [check.id for check in run.failures()] == [NO_PREFETCH_CHECK]
    message = run.check(NO_PREFETCH_CHECK).message
    assert message is not None
    assert "skill://pdf-processing/SKILL.md" in message
    summary = run.summary()
    assert f"FAILURE {NO_PREFETCH_CHECK}: {message}" in summary


@pytest.mark.conformance
@pytest.mark.usefixtures("suite_installed")
def test_client_exit_status_is_a_failure_even_without_a_failed_check() -> None:
    run = run_client_scenario([sys.executable, "-c", "raise SystemExit(3)"], NO_PREFETCH)

    # The suite only SKIPs the check (no skills/list call) but fails the run on the exit code.
    assert run.status_of(NO_PREFETCH_CHECK) == SKIPPED, run.summary()
    assert run.exit_code == 1
    assert run.client_exit_code == 3
    assert [check.id for check in run.failures()] == ["harness:exit-status"]
    assert "client exited with code 3" in run.summary()


@pytest.mark.conformance
@pytest.mark.usefixtures("suite_installed")
def test_suite_timeout_reaches_a_hanging_client() -> None:
    hang = [sys.executable, "-c", "import time; time.sleep(60)"]
    run = run_client_scenario(hang, NO_PREFETCH, suite_timeout_ms=1500, timeout=60)

    assert run.client_timed_out
    assert [check.id for check in run.failures()] == ["harness:client-timed-out"]
    # The list form is run with `exec`, so the suite's kill ends the client and not only its shell.
    assert run.duration < 20, run.summary()


@pytest.mark.conformance
@pytest.mark.usefixtures("suite_installed")
def test_our_timeout_kills_the_suite_and_its_client() -> None:
    hang = [sys.executable, "-c", "import time; time.sleep(60)"]
    with pytest.raises(ConformanceTimeoutError, match="did not finish within 2s"):
        run_client_scenario(hang, NO_PREFETCH, timeout=2)


@pytest.mark.conformance
@pytest.mark.usefixtures("suite_installed")
def test_unreachable_server_is_reported_not_silently_empty() -> None:
    url = f"http://127.0.0.1:{_closed_port()}/mcp"
    run = run_server_scenario(url, "sep-2640-skills-enumeration", timeout=60)

    assert run.exit_code == 1
    assert run.results_source == "none"
    assert [check.id for check in run.failures()] == ["harness:exit-status"]
    assert "ECONNREFUSED" in run.summary()


@pytest.mark.conformance
@pytest.mark.usefixtures("suite_installed")
def test_scenario_outside_spec_version_is_marked_not_applicable() -> None:
    # The suite skips before connecting, so no server is needed.
    url = f"http://127.0.0.1:{_closed_port()}/mcp"
    run = run_server_scenario(url, "sep-2640-skills-enumeration", spec_version="2025-11-25", timeout=60)

    assert run.not_applicable, run.summary()
    assert run.exit_code == 0
    assert run.checks == ()
    assert "not applicable" in run.summary()


@pytest.mark.conformance
@pytest.mark.usefixtures("suite_installed")
def test_suite_runs_on_node_22() -> None:
    version = subprocess.run([node_binary(), "--version"], capture_output=True, text=True, check=True).stdout
    assert version.startswith("v22."), version


# --------------------------------------------------------------------------------------------------
# Parsing, on canned output (no Node needed)
# --------------------------------------------------------------------------------------------------


def test_missing_tools_name_the_install_script(tmp_path: Path) -> None:
    reason = missing_tools_reason(tmp_path)
    assert reason is not None
    assert "scripts/install-tools" in reason
    with pytest.raises(ConformanceToolsMissingError, match="scripts/install-tools"):
        node_binary(tmp_path)


def test_parse_checks_json_keeps_message_details_and_untestable() -> None:
    text = json.dumps(
        [
            {
                "id": "sep-2640-skills-list-implemented",
                "name": "sep-2640-skills-list-implemented",
                "description": "A server declaring the extension MUST implement skills/list.",
                "status": "SUCCESS",
                "timestamp": "2026-01-01T00:00:00.000Z",
                "specReferences": [{"id": "SEP-2640", "url": "https://example.invalid/sep"}],
                "details": {"pages": 1},
            },
            {
                "id": "sep-2640-directory-read-subdir-mimetype",
                "name": "sep-2640-directory-read-subdir-mimetype",
                "description": "Some child has mimeType inode/directory.",
                "status": "FAILURE",
                "timestamp": "2026-01-01T00:00:00.000Z",
                "errorMessage": "Not testable: no skill found",
                "details": {"untestable": True, "reason": "no skill found"},
            },
            {"id": "sep-2640-meta-prefix", "status": "WARNING", "errorMessage": "un-namespaced keys"},
        ]
    )
    checks = parse_checks_json(text)

    assert [(c.id, c.status) for c in checks] == [
        ("sep-2640-skills-list-implemented", SUCCESS),
        ("sep-2640-directory-read-subdir-mimetype", FAILURE),
        ("sep-2640-meta-prefix", WARNING),
    ]
    assert checks[0].details == {"pages": 1}
    assert checks[0].spec_references[0]["id"] == "SEP-2640"
    assert not checks[0].untestable
    assert checks[1].untestable
    assert checks[1].message == "Not testable: no skill found"
    assert checks[2].describe() == "WARNING sep-2640-meta-prefix: un-namespaced keys"


def test_parse_pretty_output_reads_padded_coloured_lines() -> None:
    text = (
        "Checks:\n"
        "\x1b[90m2026-01-01T00:00:00.000Z\x1b[0m [sep-2640-skill-uri-scheme     ] "
        "\x1b[32mSUCCESS\x1b[0m Servers SHOULD use the skill:// URI scheme.\n"
        "\x1b[90m2026-01-01T00:00:00.000Z\x1b[0m [wire-schema-valid             ] "
        "\x1b[31mFAILURE\x1b[0m Every JSON-RPC message is valid.\n"
        "\nTest Results:\nPassed: 1/2, 1 failed, 0 warnings\n"
    )
    checks = parse_pretty_output(text)

    assert [(c.id, c.status) for c in checks] == [
        ("sep-2640-skill-uri-scheme", SUCCESS),
        ("wire-schema-valid", FAILURE),
    ]
    assert checks[0].description == "Servers SHOULD use the skill:// URI scheme."
