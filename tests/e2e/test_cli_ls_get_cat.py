"""`skillwire ls`, `get` and `cat` against real servers: `skillwire serve` over HTTP and stdio, and a
server that lies (tests/servers/lying_server_cli.py). The CLI runs as a subprocess, as people run it
(stdout and stderr are pipes, so output is the plain, piped form), or in-process for unit checks.
"""

from __future__ import annotations

import hashlib
import json
import re
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from servers import LyingServer, free_port, running_lying_server
from skillwire.cli.ls import Row, plain_table
from skillwire.cli.output import printable
from skillwire.core.entry import SkillEntry
from skillwire.core.manifest import human_size
from skillwire.core.skill_md import parse_skill_md
from skillwire.host.trust import SignatureCheck
from support.cli import run_cli as cli
from support.cli import run_cli_process as cli_process
from support.servers import EXAMPLES

STDIO = [sys.executable, "-m", "skillwire.cli.main", "serve", "--stdio", "--no-watch", "--no-digest-cache", "-q"]
EXAMPLE_SKILLS = {
    "skill://acme/billing/refunds/SKILL.md": EXAMPLES / "acme" / "billing" / "refunds",
    "skill://code-review/SKILL.md": EXAMPLES / "code-review",
    "skill://code-review/security-audit/SKILL.md": EXAMPLES / "code-review" / "security-audit",
    "skill://git-workflow/SKILL.md": EXAMPLES / "git-workflow",
    "skill://pdf-processing/SKILL.md": EXAMPLES / "pdf-processing",
}


def columns(line: str) -> list[str]:
    """The cells of a plain table row (cells are separated by two spaces or more)."""
    return re.split(r"\s{2,}", line.strip())


def disk_files(root: Path) -> dict[str, bytes]:
    """Every file of a skill folder (nested skills included), by `/`-path relative to it."""
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def digest(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


@pytest.fixture(scope="module")
def lying_with_token(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LyingServer]:
    with running_lying_server(tmp_path_factory.mktemp("lying-token"), "--token", "sekret") as server:
        yield server


# -- ls ----------------------------------------------------------------------------------------------------------


def test_ls_plain_table_lists_every_skill_with_counts_sizes_and_full_descriptions(examples_url: str) -> None:
    result = cli_process("ls", examples_url)
    assert result.code == 0, result.err
    assert b"\x1b[" not in result.out
    assert "\x1b[" not in result.err
    lines = result.text.splitlines()
    assert lines[0].split() == ["NAME", "FILES", "SIZE", "FLAGS", "URI", "DESCRIPTION"]
    assert len(lines) == 1 + len(EXAMPLE_SKILLS)
    for uri, folder in EXAMPLE_SKILLS.items():
        files = disk_files(folder)
        fm = parse_skill_md(files["SKILL.md"]).frontmatter
        row = next(line for line in lines if f" {uri} " in line)
        assert columns(row) == [
            fm["name"],
            str(len(files)),
            human_size(sum(map(len, files.values()))),
            "-",
            uri,
            fm["description"],  # piped without $COLUMNS: not cut
        ]
    assert cli("ls", examples_url).out == result.out  # stable


def test_ls_cuts_descriptions_to_the_width(examples_url: str) -> None:
    result = cli("ls", examples_url, env={"COLUMNS": "90"})
    assert result.code == 0, result.err
    lines = result.text.splitlines()
    assert all(len(line) <= 90 for line in lines), lines
    assert any(line.endswith("...") for line in lines[1:])


def test_ls_json(examples_url: str) -> None:
    result = cli("ls", "--json", examples_url)
    assert result.code == 0, result.err
    data = json.loads(result.out)
    assert data["origin"] == examples_url
    assert data["collisions"] == []
    assert data["malformed"] == []
    assert data["stopped_early"] is None
    assert data["pages"] == 1
    by_uri = {skill["uri"]: skill for skill in data["skills"]}
    assert set(by_uri) == set(EXAMPLE_SKILLS)
    for uri, folder in EXAMPLE_SKILLS.items():
        files = disk_files(folder)
        fm = parse_skill_md(files["SKILL.md"]).frontmatter
        assert by_uri[uri] == {
            "uri": uri,
            "name": fm["name"],
            "description": fm["description"],
            "files": len(files),
            "size": sum(map(len, files.values())),
            "dynamic": False,
            "collision": False,
            "over_limits": None,
            "source": None,  # provenance (repository, commit) only for skills served from a git root
            "signature": {"status": "unsigned", "signer": None, "fingerprint": None},  # the host's own check
        }


def test_ls_over_stdio_matches_http(examples_url: str) -> None:
    over_http = json.loads(cli("ls", "--json", examples_url).out)
    result = cli("ls", "--json", "--", *STDIO, str(EXAMPLES))
    assert result.code == 0, result.err
    over_stdio = json.loads(result.out)
    assert over_stdio["origin"] == " ".join([*STDIO, str(EXAMPLES)])
    assert over_stdio["skills"] == over_http["skills"]


def test_ls_flags_collisions_dynamic_and_malformed_entries_and_reads_nothing(lying: LyingServer) -> None:
    mark = lying.mark()
    result = cli("ls", lying.url)
    assert result.code == 0, result.err
    rows = {columns(line)[4]: columns(line) for line in result.text.splitlines()[1:]}
    assert rows["skill://lie/a/twin/SKILL.md"][:4] == ["twin", "1", "53 B", "collision"]
    assert rows["skill://lie/b/twin/SKILL.md"][3] == "collision"
    assert rows["skill://lie/dyn/SKILL.md"][:4] == ["dyn", "dynamic", "-", "dynamic"]
    assert rows["skill://lie/good/SKILL.md"][3] == "-"
    assert "skill://lie/broken/SKILL.md" not in rows
    assert "collision: 2 skills are named 'twin': skill://lie/a/twin/SKILL.md, skill://lie/b/twin/SKILL.md" in (
        result.err
    )
    assert "malformed entry skipped: skill://lie/broken/SKILL.md" in result.err
    assert "'resources' is missing" in result.err

    as_json = cli("ls", "--json", lying.url)
    data = json.loads(as_json.out)
    assert data["collisions"] == [
        {"name": "twin", "uris": ["skill://lie/a/twin/SKILL.md", "skill://lie/b/twin/SKILL.md"]}
    ]
    assert [m["uri"] for m in data["malformed"]] == ["skill://lie/broken/SKILL.md"]
    dyn = next(s for s in data["skills"] if s["uri"] == "skill://lie/dyn/SKILL.md")
    assert (dyn["dynamic"], dyn["files"], dyn["size"]) == (True, None, None)
    assert lying.reads_since(mark) == []  # ls lists only


def test_ls_quiet_prints_nothing(examples_url: str) -> None:
    result = cli("ls", "--quiet", examples_url)
    assert (result.code, result.out, result.err) == (0, b"", "")


def test_ls_table_escapes_control_characters_from_the_server() -> None:
    entry = SkillEntry.from_wire(
        {
            "uri": "skill://evil/SKILL.md",
            "frontmatter": {"name": "evil", "description": "\x1b[2J\x1b[31mred\u202eflip"},
            "resources": [{"uri": "skill://evil/SKILL.md", "digest": "sha256:" + "0" * 64, "size": 1}],
        }
    )
    line = plain_table([Row(entry, collision=False, signature=SignatureCheck("unsigned"))], None)[1]
    assert "\x1b" not in line
    assert "\u202e" not in line
    assert line.endswith("\\x1b[2J\\x1b[31mred\\u202eflip")
    assert printable("tab\there") == "tab\\there"


# -- errors ------------------------------------------------------------------------------------------------------


def test_unreachable_server_is_one_line_with_a_suggestion() -> None:
    url = f"http://127.0.0.1:{free_port()}/mcp"
    result = cli_process("ls", url)
    assert result.code == 1
    assert result.out == b""
    assert result.err.count("\n") == 1, result.err
    assert "cannot connect to" in result.err
    assert "is the server running" in result.err
    assert "Traceback" not in result.err
    debug = cli_process("--debug", "ls", url)
    assert debug.code == 1
    assert "Traceback" in debug.err
    assert "Traceback" in cli_process("ls", url, "--debug").err  # --debug after the command works too


def test_authenticated_server_needs_header(lying_with_token: LyingServer) -> None:
    refused = cli("ls", lying_with_token.url)
    assert refused.code == 1
    assert refused.err.count("\n") == 1
    assert "HTTP 401" in refused.err
    assert "--header" in refused.err
    allowed = cli("ls", "--header", "Authorization: Bearer sekret", lying_with_token.url)
    assert allowed.code == 0, allowed.err
    assert "skill://lie/good/SKILL.md" in allowed.text
    bad = cli("ls", "--header", "no-colon", lying_with_token.url)
    assert bad.code == 2
    assert "NAME:VALUE" in bad.err


def test_usage_errors_exit_2() -> None:
    assert cli("ls").code == 2
    missing = cli("ls", "example.com")
    assert missing.code == 2
    assert "-- example.com" in missing.err
    bad_uri = cli("get", "skill://a/../SKILL.md", "http://127.0.0.1:9/mcp")  # refused before connecting
    assert bad_uri.code == 2
    assert "dot segment" in bad_uri.err


def test_stdio_command_that_does_not_start() -> None:
    result = cli("ls", "--", "skillwire-no-such-command-xyz")
    assert result.code == 1
    assert "command not found" in result.err
    assert "Traceback" not in result.err


# -- get ---------------------------------------------------------------------------------------------------------


def test_get_plain_shows_frontmatter_and_a_tree_with_sizes_and_digests(examples_url: str) -> None:
    result = cli("get", "skill://pdf-processing/SKILL.md", examples_url)
    assert result.code == 0, result.err
    files = disk_files(EXAMPLE_SKILLS["skill://pdf-processing/SKILL.md"])
    lines = result.text.splitlines()
    assert lines[:3] == [
        "uri: skill://pdf-processing/SKILL.md",
        "root: skill://pdf-processing",
        f"files: {len(files)} ({sum(map(len, files.values())):,} bytes, {human_size(sum(map(len, files.values())))})",
    ]
    assert "frontmatter:" in lines
    assert "  name: pdf-processing" in lines
    assert "  license: MIT" in lines
    assert "  metadata:" in lines
    assert "    version: 2.1.0" in lines
    tree = lines[lines.index("tree:") + 1 :]
    assert "  references/" in tree
    assert "  templates/" in tree
    assert "    regional/" in tree
    for path, data in files.items():
        leaf = path.rsplit("/", 1)[-1]
        depth = path.count("/")
        row = next(line for line in tree if line.startswith("  " * (depth + 1) + leaf + " "))
        assert row.split()[1:] == [str(len(data)), digest(data)]
    assert cli("get", "skill://pdf-processing/SKILL.md", examples_url).out == result.out


def test_get_json_is_the_wire_entry_plus_file_paths(examples_url: str) -> None:
    result = cli("get", "--json", "skill://code-review/SKILL.md", examples_url)
    assert result.code == 0, result.err
    data = json.loads(result.out)
    files = disk_files(EXAMPLE_SKILLS["skill://code-review/SKILL.md"])
    assert data["origin"] == examples_url
    assert data["skill"]["uri"] == "skill://code-review/SKILL.md"
    assert data["skill"]["frontmatter"] == parse_skill_md(files["SKILL.md"]).frontmatter
    assert sorted(r["uri"] for r in data["skill"]["resources"]) == sorted(f"skill://code-review/{p}" for p in files)
    assert data["files"] == [
        {"path": p, "uri": f"skill://code-review/{p}", "digest": digest(files[p]), "size": len(files[p])}
        for p in sorted(files)
    ]


def test_get_accepts_the_root_uri_and_a_unique_name(examples_url: str) -> None:
    by_uri = cli("get", "--json", "skill://acme/billing/refunds/SKILL.md", examples_url)
    by_root = cli("get", "--json", "skill://acme/billing/refunds", examples_url)
    by_name = cli("get", "--json", "refunds", examples_url)
    assert by_uri.code == by_root.code == by_name.code == 0
    assert by_uri.out == by_root.out == by_name.out


def test_get_refuses_an_ambiguous_name_and_reports_an_unknown_skill(lying: LyingServer, examples_url: str) -> None:
    ambiguous = cli("get", "twin", lying.url)
    assert ambiguous.code == 2
    assert "skill://lie/a/twin/SKILL.md" in ambiguous.err
    assert "skill://lie/b/twin/SKILL.md" in ambiguous.err
    unknown = cli("get", "skill://nothing-here/SKILL.md", examples_url)
    assert unknown.code == 1
    assert unknown.out == b""
    assert "skill://nothing-here/SKILL.md" in unknown.err
    assert "-32602" in unknown.err
    assert unknown.err.count("\n") == 1


def test_get_dynamic_skill(lying: LyingServer) -> None:
    result = cli("get", "skill://lie/dyn/SKILL.md", lying.url)
    assert result.code == 0, result.err
    assert "files: dynamic" in result.text
    assert "tree:" not in result.text
    data = json.loads(cli("get", "--json", "skill://lie/dyn/SKILL.md", lying.url).out)
    assert data["skill"]["resources"] == "dynamic"
    assert data["files"] is None


# -- cat ---------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "uri",
    [
        "skill://pdf-processing/SKILL.md",
        "skill://pdf-processing/references/FORMS.md",
        "skill://pdf-processing/assets/logo.png",
        "skill://code-review/security-audit/references/owasp.md",
        "skill://code-review/security-audit/SKILL.md",
    ],
)
def test_cat_prints_the_exact_bytes(examples_url: str, uri: str) -> None:
    result = cli("cat", uri, examples_url)
    assert result.code == 0, result.err
    assert result.out == (EXAMPLES / uri.removeprefix("skill://")).read_bytes()
    assert result.err == ""


def test_cat_over_stdio(examples_url: str) -> None:
    result = cli_process("cat", "skill://acme/billing/refunds/examples/email.md", "--", *STDIO, str(EXAMPLES))
    assert result.code == 0, result.err
    assert result.out == (EXAMPLES / "acme/billing/refunds/examples/email.md").read_bytes()


@pytest.mark.parametrize(
    ("uri", "expected"),
    [
        ("skill://lie/bad-file/references/data.md", "digest mismatch: manifest says sha256:"),
        ("skill://lie/bad-md/SKILL.md", "size mismatch: manifest says"),
        ("skill://lie/fm-swap/SKILL.md", "description: entry has 'Summarise notes into action items.', file has"),
    ],
)
def test_cat_mismatch_prints_nothing_on_stdout(lying: LyingServer, uri: str, expected: str) -> None:
    result = cli_process("cat", uri, lying.url)
    assert result.code == 1
    assert result.out == b""
    assert expected in result.err
    assert uri in result.err
    assert result.err.count("\n") == 1
    assert "Traceback" not in result.err
    assert "LIE-PAYLOAD" not in result.err


def test_cat_refuses_a_file_not_in_the_manifest_without_reading_it(lying: LyingServer) -> None:
    mark = lying.mark()
    result = cli("cat", "skill://lie/good/references/secret.md", lying.url)
    assert result.code == 1
    assert result.out == b""
    assert "not listed in the manifest of skill://lie/good/SKILL.md" in result.err
    assert lying.reads_since(mark) == []


def test_cat_refuses_dynamic_and_unknown_skills(lying: LyingServer) -> None:
    dynamic = cli("cat", "skill://lie/dyn/SKILL.md", lying.url)
    assert dynamic.code == 1
    assert dynamic.out == b""
    assert "dynamic" in dynamic.err
    unknown = cli("cat", "skill://nowhere/at/all.md", lying.url)
    assert unknown.code == 1
    assert unknown.out == b""
    assert "no skill on the server holds skill://nowhere/at/all.md" in unknown.err
    assert cli("cat", "skill://only-authority", lying.url).code == 2
