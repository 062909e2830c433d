"""`skillwire check SERVER`: the SEP-2640 audit, against real servers and an in-memory fake.

Real servers (subprocesses on 127.0.0.1, Streamable HTTP):

- `skillwire serve` of the bundled examples and of the awesome-copilot corpus: zero findings.
- FastMCP 4.2's own skills server (tests/servers/fastmcp_skills_server.py): its YAML 1.1 frontmatter
  and its synthetic `_manifest` resources are reported, nothing else.
- tests/servers/broken_server.py, one defect per skill: each defect on its own skill, nothing else.

The in-memory `FakeServer` is an honest server that each unit test breaks in one way, to pin the
rules the real fixtures do not reach.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import pty
import re
import select
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from mcp_types.jsonrpc import METHOD_NOT_FOUND

from servers import free_port, running_http_server
from servers.broken_server import DEFECTS
from servers.era_server import ANY_ERA as ERA_ANY
from servers.era_server import MODERN_ONLY as ERA_MODERN_ONLY
from skillwire.checks.audit import RULES, SERVER, AuditResult, audit
from skillwire.cli.args import ServerTarget
from skillwire.cli.check import render
from skillwire.cli.output import Output
from skillwire.client.requests import send_raw
from support.cli import run_cli, run_cli_process
from support.fake_skills_server import DIR, EXTENSION_ID, FAKE_FILES, FakeServer, digest, md
from support.servers import CORPUS, REPO_ROOT

FIXTURES = REPO_ROOT / "tests" / "servers"
NONCE_RE = re.compile(r"skillwire-check-nonexistent-[0-9a-f]+")
ANSI_RE = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
SERVE = [sys.executable, "-m", "skillwire.cli.main", "serve", "--no-watch", "--no-digest-cache", "-q"]


@dataclass
class Result:
    code: int
    out: str
    err: str

    def findings(self) -> list[dict[str, Any]]:
        """The finding records of `--json` (every line but the final summary record)."""
        records = [json.loads(line) for line in self.out.splitlines()]
        assert records, self.out
        assert records[-1].get("summary") is True, self.out
        return records[:-1]


def cli(*args: str) -> Result:
    """`main([...])` in this process, stdout and stderr captured as pipes (so: plain output)."""
    ran = run_cli(*args)
    return Result(ran.code, ran.text, ran.err)


def cli_process(*args: str, timeout: float = 120) -> Result:
    ran = run_cli_process(*args, timeout=timeout)
    return Result(ran.code, ran.text, ran.err)


def keys(findings: list[dict[str, Any]]) -> set[tuple[str, str]]:
    return {(f["rule"], f["skill"]) for f in findings}


# -- real servers ------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def check_examples_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    port = free_port()
    log = tmp_path_factory.mktemp("check-examples") / "serve.log"
    with running_http_server([*SERVE, "--http", f"127.0.0.1:{port}"], port, log):
        yield f"http://127.0.0.1:{port}/mcp"


@pytest.fixture(scope="module")
def broken_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    port = free_port()
    log = tmp_path_factory.mktemp("check-broken") / "server.log"
    with running_http_server([sys.executable, str(FIXTURES / "broken_server.py"), "--port", str(port)], port, log):
        yield f"http://127.0.0.1:{port}/mcp"


PLAIN = "---\nname: plain\ndescription: A plain skill.\n---\nA plain body.\n"
YAML11 = "---\nname: yaml11\ndescription: Frontmatter that YAML 1.1 reads differently.\nenabled: yes\nmode: 0o17\n---\n"


@pytest.fixture(scope="module")
def fastmcp_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    folder = tmp_path_factory.mktemp("fastmcp-skills")
    (folder / "plain" / "references").mkdir(parents=True)
    (folder / "plain" / "SKILL.md").write_text(PLAIN)
    (folder / "plain" / "references" / "notes.md").write_text("Notes.\n")
    (folder / "yaml11").mkdir()
    (folder / "yaml11" / "SKILL.md").write_text(YAML11 + "Body.\n")
    port = free_port()
    argv = [sys.executable, str(FIXTURES / "fastmcp_skills_server.py"), "--port", str(port), str(folder)]
    with running_http_server(argv, port, folder.parent / f"{folder.name}.log"):
        yield f"http://127.0.0.1:{port}/mcp"


def test_bundled_examples_pass(check_examples_url: str) -> None:
    result = cli("check", check_examples_url)
    assert result.code == 0, result.out + result.err
    lines = result.out.splitlines()
    assert lines[0] == f"skillwire check {check_examples_url}"
    assert lines[1] == "protocol 2026-07-28, 5 skills on 1 page, 13 files read, 13 directories read"
    assert lines[-1] == "check passed: 0 failures, 0 warnings; 5 of 5 skills without findings"
    assert not ANSI_RE.search(result.out)
    as_json = cli("check", "--json", check_examples_url)
    assert as_json.code == 0
    assert as_json.findings() == []


@pytest.mark.corpus
def test_corpus_passes(tmp_path: Path) -> None:
    if not CORPUS.is_dir():
        pytest.skip(f"corpus not present at {CORPUS}")
    started = time.monotonic()
    port = free_port()
    argv = [*SERVE, str(CORPUS), "--http", f"127.0.0.1:{port}"]
    with running_http_server(argv, port, tmp_path / "serve.log", timeout=120):
        result = cli("check", f"http://127.0.0.1:{port}/mcp")
    assert result.code == 0, result.out + result.err
    # The corpus's only findings: six skills list allowed-tools as a YAML list (Agent Skills: one string);
    # served and accepted, so warnings, as `skillwire lint` has them.
    advice = [line for line in result.out.splitlines() if line.startswith("  WARN")]
    assert len(advice) == 6
    assert all(line.startswith("  WARN  entry.field-advice  [Fmt]  allowed-tools is a list") for line in advice)
    header = result.out.splitlines()[1]
    match = re.search(r"(\d+) skills on", header)
    assert match is not None, header
    skills = int(match.group(1))
    assert skills > 350, header
    assert (
        result.out.splitlines()[-1]
        == f"check passed: 0 failures, 6 warnings; {skills - 6} of {skills} skills without findings"
    )
    assert time.monotonic() - started < 120


def test_fastmcp_server(fastmcp_url: str) -> None:
    """FastMCP reads YAML 1.1 (`yes` -> true, `0o17` -> '0o17') and serves an unlisted `_manifest` per skill.

    The `_manifest` finding is genuine: `skill://<path>/_manifest` is served (resources/list and
    resources/read) inside the skill's root but is missing from its manifest, so the manifest is not
    complete ([Res]) and a host holding the entry must fail any read of it ([IV-win]). FastMCP
    declares no `directoryRead`, so no directory read is sent and that is not a finding.
    """
    result = cli("check", "--json", fastmcp_url)
    assert result.code == 1, result.out + result.err
    findings = result.findings()
    assert [(f["severity"], f["rule"], f["section"], f["skill"], f["uri"]) for f in findings] == [
        ("failure", "resources.unlisted-file", "[Res]", "skill://plain/SKILL.md", "skill://plain/_manifest"),
        ("failure", "file.frontmatter-mismatch", "[FM]", "skill://yaml11/SKILL.md", "skill://yaml11/SKILL.md"),
        ("failure", "resources.unlisted-file", "[Res]", "skill://yaml11/SKILL.md", "skill://yaml11/_manifest"),
    ]
    assert findings[1]["message"] == (
        "the entry's frontmatter differs from skill://yaml11/SKILL.md (read as YAML 1.2): "
        "enabled: entry has true, file has 'yes'; mode: entry has '0o17', file has 15"
    )
    assert findings[0]["message"].startswith(
        "resources/list advertises skill://plain/_manifest, inside this skill's root, but the manifest does not list it"
    )
    plain = cli("check", fastmcp_url)
    assert plain.out.splitlines()[1] == "protocol 2026-07-28, 2 skills on 1 page, 3 files read, no directoryRead"


def test_broken_server_every_defect_on_its_skill(broken_url: str) -> None:
    result = cli("check", "--json", broken_url)
    assert result.code == 1, result.err
    findings = result.findings()
    assert len(findings) == len(DEFECTS)
    assert keys(findings) == DEFECTS
    assert not [f for f in findings if "honest" in f["skill"]]
    for finding in findings:
        assert set(finding) == {"severity", "rule", "section", "skill", "uri", "message"}
        assert finding["severity"] == RULES[finding["rule"]].severity
        assert finding["section"] == RULES[finding["rule"]].section
    by_rule = {f["rule"]: f for f in findings}
    assert by_rule["limit.files"]["severity"] == "warning"
    assert by_rule["file.size-mismatch"]["message"] == (
        "skill://broken/wrong-size/data.md: the manifest says 8 bytes, 5 bytes were served"
    )
    bad = "sha256:" + hashlib.sha256(b"other bytes\n").hexdigest()
    good = "sha256:" + hashlib.sha256(b"data\n").hexdigest()
    assert by_rule["file.digest-mismatch"]["message"] == (
        f"skill://broken/bad-digest/data.md: the manifest says {bad}, the bytes served hash to {good}"
    )
    assert by_rule["file.frontmatter-mismatch"]["message"].endswith(
        "description: entry has 'What the entry says.', file has 'What the file says.'"
    )
    assert by_rule["entry.name-mismatch"]["message"] == (
        "frontmatter name 'other-name' does not match its folder 'name-mismatch' (the final segment of its URI)"
    )
    assert by_rule["list.split-entry"]["message"].startswith("the entry appears 2 times, on pages 2 and 3")
    assert by_rule["dir.unlisted-child"]["uri"] == "skill://broken/unlisted-child/extra.md"
    unknown = by_rule["get.unknown-uri-error-code"]
    assert NONCE_RE.search(unknown["uri"])
    assert "answered error -32603" in unknown["message"]


BROKEN_REPORT = """\
skillwire check {url}
protocol 2026-07-28, 9 skills on 4 pages, 527 files read, 11 directories read
Claude Code 2.1.337 (per server: 100 skills, 20 pages and 512 KiB of entries) keeps all 7 listed skills \
(75,845 bytes of entries)

server
  FAIL  get.unknown-uri-error-code  [Get]  skills/get of a skill URI that cannot exist answered error -32603 \
(internal error looking up skill://NONCE/SKILL.md); it must be error -32602

skill://broken/bad-digest/SKILL.md
  FAIL  file.digest-mismatch  [IV-read]  skill://broken/bad-digest/data.md: the manifest says {bad}, the bytes \
served hash to {good}

skill://broken/frontmatter-drift/SKILL.md
  FAIL  file.frontmatter-mismatch  [FM]  the entry's frontmatter differs from \
skill://broken/frontmatter-drift/SKILL.md (read as YAML 1.2): description: entry has 'What the entry says.', \
file has 'What the file says.'

skill://broken/name-mismatch/SKILL.md
  FAIL  entry.name-mismatch  [Map]  frontmatter name 'other-name' does not match its folder 'name-mismatch' (the \
final segment of its URI)

skill://broken/no-resources/SKILL.md
  FAIL  entry.resources-missing  [Res]  'resources' is missing (an array or "dynamic" is required)

skill://broken/over-limit/SKILL.md
  WARN  limit.files  [Lim]  skill has 513 files; the limit is 512 per skill (SKILL.md included)

skill://broken/split/SKILL.md
  FAIL  list.split-entry  [List]  the entry appears 2 times, on pages 2 and 3 (with 2 + 1 resources items): an entry \
must never be split across pages; the fragments were merged for the other checks

skill://broken/unlisted-child/SKILL.md
  FAIL  dir.unlisted-child  [Res]  resources/directory/read of skill://broken/unlisted-child lists \
skill://broken/unlisted-child/extra.md, which the manifest does not list (a manifest must list every file of the skill)

skill://broken/wrong-size/SKILL.md
  FAIL  file.size-mismatch  [IV-read]  skill://broken/wrong-size/data.md: the manifest says 8 bytes, 5 bytes were served

check failed: 8 failures, 1 warning; 1 of 9 skills without findings
"""


def test_broken_server_plain_report(broken_url: str) -> None:
    """Piped output is the plain report: grouped by skill, one line per finding, no colour, no wrapping."""
    result = cli_process("check", broken_url)
    assert result.code == 1
    assert result.err == ""  # no progress bar on a pipe
    bad = "sha256:" + hashlib.sha256(b"other bytes\n").hexdigest()
    good = "sha256:" + hashlib.sha256(b"data\n").hexdigest()
    expected = BROKEN_REPORT.format(url=broken_url, bad=bad, good=good)
    assert NONCE_RE.sub("NONCE", result.out) == expected


def test_broken_server_quiet_prints_failures_only(broken_url: str) -> None:
    result = cli("check", "--quiet", broken_url)
    assert result.code == 1
    lines = result.out.splitlines()
    assert len(lines) == len(DEFECTS) - 1  # the limit warning is not printed
    assert lines[0].startswith("server: FAIL  get.unknown-uri-error-code  [Get]  ")
    assert "skill://broken/split/SKILL.md: FAIL  list.split-entry  [List]  the entry appears 2 times" in result.out
    assert "WARN" not in result.out


def test_terminal_gets_colour_and_a_progress_bar(check_examples_url: str) -> None:
    """On a terminal (a pty here) the report is coloured and a progress bar runs on stderr."""
    main_fd, child_fd = pty.openpty()
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "TERM")} | {"TERM": "xterm", "COLUMNS": "120"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "skillwire.cli.main", "check", check_examples_url],
        stdin=subprocess.DEVNULL,
        stdout=child_fd,
        stderr=child_fd,
        env=env,
    )
    os.close(child_fd)
    chunks: list[bytes] = []
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        ready, _, _ = select.select([main_fd], [], [], 0.5)
        if ready:
            try:
                data = os.read(main_fd, 65536)
            except OSError:  # EIO: the child closed the terminal
                break
            if not data:
                break
            chunks.append(data)
        elif proc.poll() is not None:
            break
    os.close(main_fd)
    assert proc.wait(timeout=30) == 0
    text = b"".join(chunks).decode("utf-8", errors="replace")
    assert ANSI_RE.search(text)
    plain = ANSI_RE.sub("", text)
    assert "check passed: 0 failures, 0 warnings; 5 of 5 skills without findings" in plain


def test_unreachable_server_is_one_line_error() -> None:
    port = free_port()
    result = cli_process("check", f"http://127.0.0.1:{port}/mcp", timeout=60)
    assert result.code == 1
    assert result.out == ""
    lines = result.err.strip().splitlines()
    assert len(lines) == 1, result.err
    assert lines[0].startswith(f"skillwire: error: cannot connect to http://127.0.0.1:{port}/mcp")
    assert "Traceback" not in result.err


def test_usage_errors() -> None:
    assert cli("check").code == 2
    assert "no server given" in cli("check").err
    result = cli("check", "--concurrency", "0", "http://127.0.0.1:1/mcp")
    assert (result.code, result.err.strip()) == (2, "skillwire: --concurrency must be at least 1, got 0")


def test_list_rules() -> None:
    result = cli("check", "--list-rules")
    assert result.code == 0
    assert len(result.out.splitlines()) == len(RULES)
    assert re.search(r"^file\.digest-mismatch +FAIL +\[IV-read\] +", result.out, re.M)
    as_json = [json.loads(line) for line in cli("check", "--list-rules", "--json").out.splitlines()]
    assert {r["rule"] for r in as_json} == set(RULES)
    assert all(r["severity"] in ("failure", "warning") for r in as_json)
    # The cache attributes and resultType exist from 2026-07-28 on; a 2025-11-25 session is not held to them.
    assert {r["rule"] for r in as_json if r["since"] == "2026-07-28"} == {
        "list.result-type",
        "list.ttl-invalid",
        "list.cache-scope-invalid",
        "get.result-type",
        "get.ttl-invalid",
        "get.cache-scope-invalid",
        "dir.result-type",
    }
    assert re.search(r"^list\.ttl-invalid +FAIL .*\(protocol 2026-07-28 and later\)$", result.out, re.M)


@pytest.fixture(scope="module")
def era_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    port = free_port()
    log = tmp_path_factory.mktemp("check-era") / "server.log"
    with running_http_server([sys.executable, str(FIXTURES / "era_server.py"), "--port", str(port)], port, log):
        yield f"http://127.0.0.1:{port}/mcp"


def audit_in_mode(url: str, mode: str) -> tuple[str | None, AuditResult]:
    """The audit `skillwire check` runs, over an SDK client pinned to one protocol era (`legacy` or `auto`)."""

    async def go() -> tuple[str | None, AuditResult]:
        async with Client(streamable_http_client(url), mode=mode) as client:
            capabilities = client.server_capabilities.model_dump(by_alias=True, exclude_none=True, mode="json")

            async def send(request: Any) -> dict[str, Any]:
                return await send_raw(client, request)

            result = await audit(send, capabilities, protocol_version=client.protocol_version)
            return client.protocol_version, result

    return anyio.run(go)


def test_rules_apply_only_in_the_era_that_defines_them(era_url: str, check_examples_url: str) -> None:
    """`resultType`, `ttlMs` and `cacheScope` exist from 2026-07-28 on: a 2025-11-25 session is not held to them.

    The era server omits all three everywhere (as 2025-11-25-schema servers do); what holds in every era
    (a published `.env`, list-valued metadata) is reported in both. `skillwire serve` is clean in both.
    """
    version, legacy = audit_in_mode(era_url, "legacy")
    assert version == "2025-11-25"
    assert found(legacy) == ERA_ANY
    version, modern = audit_in_mode(era_url, "auto")
    assert version == "2026-07-28"
    assert found(modern) == ERA_ANY | ERA_MODERN_ONLY
    by_rule = {f.rule: f for f in modern.findings}
    assert by_rule["get.ttl-invalid"].message == (
        "skills/get of 3 skills: ttlMs is missing (e.g. skill://era/list-metadata/SKILL.md, skill://era/plain/SKILL.md "
        "and 1 more)"
    )
    assert by_rule["entry.dotfile"].severity == "warning"
    assert by_rule["entry.dotfile"].uri == "skill://era/with-env/.env"
    assert by_rule["entry.metadata-invalid"].message == (
        "metadata.trigger-keywords must be a string (Agent Skills metadata values are strings), not a list"
    )
    for mode in ("legacy", "auto"):
        assert audit_in_mode(check_examples_url, mode)[1].findings == []


# -- the in-memory fake --------------------------------------------------------------------------------------------


def found(result: AuditResult) -> set[tuple[str, str | None]]:
    return {(f.rule, f.skill) for f in result.findings}


ALPHA = "skill://fake/alpha/SKILL.md"
BETA = "skill://fake/beta/SKILL.md"
OUTER = "skill://fake/outer/SKILL.md"
INNER = "skill://fake/outer/inner/SKILL.md"


def test_fake_honest_server_has_no_findings() -> None:
    fake = FakeServer()
    result = fake.audit()
    assert result.findings == []
    assert result.stats.skills == 4
    assert result.stats.pages == 2
    assert result.stats.files_read == len(FAKE_FILES)
    # roots and subdirectories of every skill, each read once
    assert sorted(u for m, u in fake.requests if m == "resources/directory/read" and "n0nce" not in u) == [
        "skill://fake/alpha",
        "skill://fake/alpha/SKILL.md",  # the file-URI probe (must be -32602)
        "skill://fake/alpha/refs",
        "skill://fake/beta",
        "skill://fake/outer",
        "skill://fake/outer/inner",
    ]


def test_no_directory_read_without_the_declaration() -> None:
    fake = FakeServer(directory_read=False)
    assert fake.audit().findings == []
    assert not [m for m, _ in fake.requests if m == "resources/directory/read"]


def test_extension_not_declared() -> None:
    fake = FakeServer()
    fake.capabilities["extensions"] = {}
    result = fake.audit()
    assert found(result) == {("cap.extension-missing", SERVER)}
    assert fake.requests == []


def test_capability_problems() -> None:
    fake = FakeServer()
    del fake.capabilities["resources"]
    fake.capabilities["extensions"][EXTENSION_ID] = {"directoryRead": "yes", "specVersion": "1"}
    result = fake.audit()
    assert found(result) == {
        ("cap.resources-missing", SERVER),
        ("cap.directory-read-invalid", SERVER),
        ("cap.settings-envelope", SERVER),
    }
    assert not [m for m, _ in fake.requests if m in ("resources/directory/read", "resources/list")]


def test_methods_not_implemented() -> None:
    fake = FakeServer()
    fake.errors[("skills/list", "")] = MCPError(METHOD_NOT_FOUND, "Method not found")
    assert found(fake.audit()) == {("cap.list-not-implemented", SERVER)}
    fake = FakeServer()
    fake.errors[("skills/get", "")] = MCPError(METHOD_NOT_FOUND, "Method not found")
    fake.errors[("resources/directory/read", "")] = MCPError(METHOD_NOT_FOUND, "Method not found")
    result = fake.audit()
    assert found(result) == {("cap.get-not-implemented", SERVER), ("cap.directory-read-not-implemented", SERVER)}
    assert len(result.findings) == 2


def test_list_envelope_and_pagination() -> None:
    fake = FakeServer()
    fake.list_envelope = {"resultType": "partial", "ttlMs": -1}
    result = fake.audit()
    messages = {(f.rule, f.skill): f.message for f in result.findings}
    assert messages == {
        ("list.result-type", SERVER): "skills/list pages 1 and 2: resultType is 'partial', not \"complete\"",
        ("list.ttl-invalid", SERVER): "skills/list pages 1 and 2: ttlMs is -1, not an integer >= 0",
        ("list.cache-scope-invalid", SERVER): "skills/list pages 1 and 2: cacheScope is missing",
    }


def test_cursor_loop_stops() -> None:
    fake = FakeServer()
    fake.pages = [[fake.entries[ALPHA]], [fake.entries[BETA]], [fake.entries[OUTER]]]

    original = fake.send

    async def looping(request: Any) -> dict[str, Any]:
        result = await original(request)
        if request.method == "skills/list" and "nextCursor" in result:
            result["nextCursor"] = "1"  # page 2 points at itself
        return result

    fake.send = looping  # type: ignore[method-assign]
    result = fake.audit()
    assert found(result) == {("list.cursor-repeated", SERVER)}
    assert result.stats.pages == 2


def test_entry_shape_rules_land_on_their_skill() -> None:
    fake = FakeServer(directory_read=False)
    alpha = fake.entries[ALPHA]
    alpha["resources"] = [
        *alpha["resources"],
        {"uri": "skill://fake/beta/SKILL.md", "digest": digest("x"), "size": 1},  # outside the skill
        dict(alpha["resources"][1]),  # listed twice
    ]
    beta = fake.entries[BETA]
    beta["resources"] = [{"uri": BETA, "digest": "sha256:ABC", "size": -4}]
    outer = fake.entries[OUTER]
    outer["resources"] = [r for r in outer["resources"] if r["uri"] != OUTER]  # no own SKILL.md
    result = fake.audit()
    assert found(result) == {
        ("entry.resource-outside-skill", ALPHA),
        ("entry.resource-duplicate", ALPHA),
        ("entry.digest-invalid", BETA),
        ("entry.size-invalid", BETA),
        ("entry.skill-md-missing", OUTER),
    }
    messages = {f.rule: f.message for f in result.findings}
    assert messages["entry.size-invalid"] == f"resources[0] {BETA}: size -4 is not a non-negative integer"
    assert messages["entry.resource-outside-skill"] == (
        "resources[2]: uri 'skill://fake/beta/SKILL.md' is not a file inside skill://fake/alpha"
    )


def test_entries_without_uri_or_object_are_server_findings() -> None:
    fake = FakeServer(directory_read=False)
    fake.pages = [[fake.entries[ALPHA], "nonsense", {"frontmatter": {}}]]
    fake.entries = {ALPHA: fake.entries[ALPHA]}
    result = fake.audit()
    assert [(f.rule, f.skill, f.message) for f in result.findings] == [
        ("entry.uri-missing", SERVER, "skills/list page 1 entry 2 has no 'uri' string (got null)"),
        ("list.entry-not-object", SERVER, "skills/list page 1 entry 1 is 'nonsense', not an object"),
    ]


def test_name_rules() -> None:
    files = {
        "skill://fake/Bad_Name/SKILL.md": md("Bad_Name"),
        "skill://fake/café/SKILL.md": md("café"),
        "skill://other/café/SKILL.md": md("café"),
    }
    result = FakeServer(files, directory_read=False).audit()
    assert found(result) == {
        ("entry.name-invalid", "skill://fake/Bad_Name/SKILL.md"),
        ("entry.name-not-ascii", "skill://fake/café/SKILL.md"),
        ("entry.name-not-ascii", "skill://other/café/SKILL.md"),
        ("names.duplicate", "skill://fake/café/SKILL.md"),
        ("names.duplicate", "skill://other/café/SKILL.md"),
    }


def test_nested_skill_files_must_be_in_the_outer_manifest() -> None:
    fake = FakeServer(directory_read=False)
    outer = fake.entries[OUTER]
    outer["resources"] = [r for r in outer["resources"] if "/inner/" not in r["uri"]]
    result = fake.audit()
    assert found(result) == {("entry.nested-file-missing", OUTER)}
    assert len(result.findings) == 2  # inner/SKILL.md and inner/data.md


def test_get_differs_and_get_envelope() -> None:
    fake = FakeServer(directory_read=False)
    changed = json.loads(json.dumps(fake.entries[ALPHA]))
    changed["frontmatter"]["description"] = "Changed."
    changed["resources"] = changed["resources"][:1]
    fake.get_entries[ALPHA] = changed
    fake.get_envelope = {"resultType": "complete", "nextCursor": "x"}
    result = fake.audit()
    messages = {(f.rule, f.skill): f.message for f in result.findings}
    assert messages == {
        ("get.entry-differs", ALPHA): "skills/get returned a different entry than skills/list: frontmatter field(s) "
        "description differ; removed skill://fake/alpha/refs/one.md",
        ("get.ttl-invalid", SERVER): "skills/get of 4 skills: ttlMs is missing (e.g. skill://fake/alpha/SKILL.md, "
        "skill://fake/beta/SKILL.md and 2 more)",
        ("get.cache-scope-invalid", SERVER): "skills/get of 4 skills: cacheScope is missing (e.g. "
        "skill://fake/alpha/SKILL.md, skill://fake/beta/SKILL.md and 2 more)",
        ("get.cursor-present", SERVER): "skills/get of 4 skills: the result has nextCursor 'x' (e.g. "
        "skill://fake/alpha/SKILL.md, skill://fake/beta/SKILL.md and 2 more)",
    }
    assert RULES["get.entry-differs"].severity == "warning"


def test_get_errors_and_uri_mismatch() -> None:
    fake = FakeServer(directory_read=False)
    fake.errors[("skills/get", ALPHA)] = MCPError(-32603, "boom")
    fake.get_entries[BETA] = fake.entries[OUTER]
    result = fake.audit()
    assert [(f.rule, f.skill, f.message) for f in result.findings] == [
        (
            "get.error",
            ALPHA,
            "skills/get of this listed skill answered error -32603 (boom); it must answer for every served skill",
        ),
        ("get.uri-mismatch", BETA, f"skills/get of {BETA} answered with the entry of {OUTER}"),
    ]


def test_read_problems() -> None:
    fake = FakeServer(directory_read=False)
    fake.errors[("resources/read", "skill://fake/alpha/refs/one.md")] = MCPError(-32603, "disk on fire")
    fake.files[BETA] = "no frontmatter here\n"
    fake.entries[BETA] = {
        **fake.entries[BETA],
        "resources": [{"uri": BETA, "digest": digest(fake.files[BETA]), "size": len(fake.files[BETA])}],
    }
    fake.hang.add("skill://fake/outer/notes.md")
    result = fake.audit(request_timeout=0.3)
    messages = {(f.rule, f.skill): f.message for f in result.findings}
    assert messages == {
        ("file.read-error", ALPHA): "skill://fake/alpha/refs/one.md: resources/read answered error -32603 "
        "(disk on fire)",
        ("file.frontmatter-invalid", BETA): f"{BETA}: SKILL.md does not start with a YAML frontmatter block "
        "('---' on line 1)",
        ("file.read-error", OUTER): "skill://fake/outer/notes.md: resources/read answered nothing within 0.3 s",
    }


def test_unknown_uri_probes() -> None:
    fake = FakeServer()
    fake.served["skill://skillwire-check-nonexistent-n0nce/SKILL.md"] = "anything"
    fake.directories["skill://skillwire-check-nonexistent-n0nce"] = {}
    fake.directories[ALPHA] = {}
    result = fake.audit()
    assert [(f.rule, f.uri) for f in result.findings] == [
        ("dir.file-uri-error-code", ALPHA),
        ("dir.unknown-uri-error-code", "skill://skillwire-check-nonexistent-n0nce"),
        ("read.unknown-uri-error-code", "skill://skillwire-check-nonexistent-n0nce/SKILL.md"),
    ]
    assert result.findings[2].message == (
        "resources/read of a SKILL.md URI of a skill that cannot exist answered with content; an unserved URI must "
        "get error -32602"
    )


def test_directory_reads_against_the_manifest() -> None:
    fake = FakeServer()
    del fake.directories["skill://fake/alpha"]["skill://fake/alpha/refs"]  # a manifest directory missing
    fake.directories["skill://fake/beta"]["skill://fake/beta/SKILL.md"]["mimeType"] = DIR  # a file shown as dir
    fake.directories["skill://fake/beta"]["skill://fake/beta/more"] = {"uri": "skill://fake/beta/more", "mimeType": DIR}
    fake.directories["skill://fake/beta/more"] = {
        "skill://fake/beta/more/hidden.md": {"uri": "skill://fake/beta/more/hidden.md", "mimeType": "text/markdown"}
    }  # an unexpected directory holding an unlisted file
    fake.directories["skill://fake/outer/inner"]["skill://fake/elsewhere.md"] = {"uri": "skill://fake/elsewhere.md"}
    result = fake.audit()
    assert sorted((f.rule, f.skill, f.uri or "") for f in result.findings) == sorted(
        [
            ("dir.missing-child", ALPHA, "skill://fake/alpha/refs"),
            ("dir.mime-type", BETA, BETA),
            ("dir.not-direct-child", INNER, "skill://fake/elsewhere.md"),
            ("dir.not-direct-child", OUTER, "skill://fake/elsewhere.md"),
            ("dir.unlisted-child", BETA, "skill://fake/beta/more/hidden.md"),
        ]
    )


def test_resources_list_against_the_manifest() -> None:
    fake = FakeServer(directory_read=False)
    fake.listed_resources.append({"uri": "skill://fake/outer/inner/_manifest", "name": "m"})
    fake.listed_resources.append({"uri": "skill://fake/outer/inner", "name": "d", "mimeType": DIR})  # a dir: fine
    result = fake.audit()
    assert found(result) == {("resources.unlisted-file", INNER), ("resources.unlisted-file", OUTER)}
    assert len(result.findings) == 2


def test_limits_are_warnings() -> None:
    fake = FakeServer(directory_read=False)
    big = fake.entries[BETA]
    big["resources"] = [
        *big["resources"],
        {"uri": "skill://fake/beta/blob.bin", "digest": digest("b"), "size": 17 << 20},
    ]
    fake.served["skill://fake/beta/blob.bin"] = "b"  # the server lies about the size, too
    result = fake.audit()
    assert {f.rule: f.severity for f in result.findings} == {"file.size-mismatch": "failure", "limit.bytes": "warning"}
    assert [f.skill for f in result.findings] == [BETA, BETA]


def test_split_entry_is_merged() -> None:
    fake = FakeServer()
    alpha = fake.entries[ALPHA]
    first = {**alpha, "resources": alpha["resources"][:1]}
    second = {**alpha, "resources": alpha["resources"][1:]}
    others = [e for u, e in fake.entries.items() if u != ALPHA]
    fake.pages = [[first, others[0]], [second, *others[1:]]]
    result = fake.audit()
    assert [(f.rule, f.skill) for f in result.findings] == [("list.split-entry", ALPHA)]
    fake.pages = [[first, second, *others]]
    result = fake.audit()
    assert [(f.rule, f.skill, f.severity) for f in result.findings] == [("list.duplicate-entry", ALPHA, "warning")]


def test_dynamic_skill_gets_its_frontmatter_checked_only() -> None:
    fake = FakeServer({**FAKE_FILES, "skill://fake/gen/SKILL.md": md("gen", "Generated.")})
    fake.entries["skill://fake/gen/SKILL.md"]["resources"] = "dynamic"
    del fake.directories["skill://fake/gen"]  # a dynamic skill's directory need not exist
    assert fake.audit().findings == []
    assert ("resources/read", "skill://fake/gen/SKILL.md") in fake.requests
    fake.entries["skill://fake/gen/SKILL.md"]["frontmatter"]["description"] = "Something else."
    assert found(fake.audit()) == {("file.frontmatter-mismatch", "skill://fake/gen/SKILL.md")}


def test_report_collapses_repeated_rules() -> None:
    files = {"skill://fake/many/SKILL.md": md("many")} | {f"skill://fake/many/f{i}.md": f"{i}\n" for i in range(8)}
    fake = FakeServer(files, directory_read=False)
    for i in range(8):
        fake.errors[("resources/read", f"skill://fake/many/f{i}.md")] = MCPError(-32603, "gone")
    result = fake.audit()
    assert len(result.failures) == 8
    stdout = io.StringIO()
    render(Output(stdout=stdout, stderr=io.StringIO()), ServerTarget("http://x/mcp", None), result)
    lines = stdout.getvalue().splitlines()
    assert lines[2].startswith(
        "Claude Code 2.1.337 (per server: 100 skills, 20 pages and 512 KiB of entries) keeps all 1"
    )
    assert lines[4] == "skill://fake/many/SKILL.md"
    assert lines[5:11] == [
        *(
            f"  FAIL  file.read-error  [Read]  skill://fake/many/f{i}.md: resources/read answered error -32603 (gone)"
            for i in range(5)
        ),
        "  FAIL  file.read-error  [Read]  … and 3 more like these (--json lists every finding)",
    ]
    assert lines[-1] == "check failed: 8 failures, 0 warnings; 0 of 1 skills without findings"


def test_directory_result_type_names_directories_in_plural_and_only_from_2026() -> None:
    fake = FakeServer()
    honest_send = fake.send

    async def without_result_type(request: Any) -> dict[str, Any]:
        result = await honest_send(request)
        if request.method == "resources/directory/read":
            del result["resultType"]
        return result

    fake.send = without_result_type  # type: ignore[method-assign]
    modern = fake.audit(protocol_version="2026-07-28")
    assert [(f.rule, f.skill) for f in modern.findings] == [("dir.result-type", SERVER)]
    assert modern.findings[0].message == (
        'resources/directory/read of 5 directories: resultType is missing (must be "complete") (e.g. '
        "skill://fake/alpha, skill://fake/alpha/refs and 3 more)"
    )
    assert fake.audit(protocol_version="2025-11-25").findings == []
    assert fake.audit().findings == modern.findings  # an unknown version is held to every rule
