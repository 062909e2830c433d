"""Say when a host will cut the catalog (issue 36 item 3): `skillwire serve` says so in one line at start-up when
the listed set passes Claude Code 2.1.337's listing limits (100 skills, 20 pages, 512 KiB of entries), and
`skillwire check URL` reports how many skills and bytes such a host keeps and which it drops. Both through
`core/host_limits.py`, against a real `serve` over HTTP on 127.0.0.1.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from support.calls import call, list_uris
from support.cli import run_cli
from support.servers import serve_http

pytestmark = pytest.mark.e2e

HOST_LINE = "Claude Code 2.1.337 lists the first"


def write_skills(root: Path, count: int, *, description: str = "A generated skill.") -> list[str]:
    uris: list[str] = []
    for i in range(count):
        name = f"skill-{i:03d}"
        folder = root / name
        folder.mkdir(parents=True)
        (folder / "SKILL.md").write_text(f"---\nname: {name}\ndescription: {description}\n---\nBody {i}.\n")
        uris.append(f"skill://{name}/SKILL.md")
    return uris


def test_serve_warns_and_check_names_what_a_host_drops(tmp_path: Path) -> None:
    uris = write_skills(tmp_path / "skills", 130)
    with serve_http([str(tmp_path / "skills"), "--no-digest-cache"]) as server:
        warnings = [line for line in server.startup_log.splitlines() if HOST_LINE in line]
        assert warnings == [
            "skillwire: Claude Code 2.1.337 lists the first 100 of the 130 listed skills (it keeps at most 100 "
            "skills; its limits per server: 100 skills, 20 pages and 512 KiB of entries): choose which are listed "
            "with --list/--unlist GLOB; the others stay loadable by address (skills/get) and findable by the "
            "search tool"
        ]
        result = run_cli("check", "--json", server.url)
        assert result.code == 0, result.err
        summary = json.loads(result.text.splitlines()[-1])
        host = summary["host_limits"]
        assert (host["listed"], host["kept"], host["pages_read"], host["stopped"]) == (130, 100, 1, "skills")
        assert host["dropped"] == uris[100:]  # a host keeps the start of the listing, in URI order
        assert host["limits"] == {"skills": 100, "pages": 20, "entry_bytes": 512 * 1024}
        text = run_cli("check", server.url)
        line = next(line for line in text.text.splitlines() if line.startswith("Claude Code"))
        assert line.startswith(
            "Claude Code 2.1.337 (per server: 100 skills, 20 pages and 512 KiB of entries) keeps 100 of 130 listed "
        )
        assert line.endswith(
            "drops 30: skill://skill-100/SKILL.md, skill://skill-101/SKILL.md, skill://skill-102/SKILL.md and 27 more"
        )


def test_the_byte_budget_and_the_page_limit_are_reported_too(tmp_path: Path) -> None:
    # 60 skills of about 9 KiB of entry each: under 100 skills, over 512 KiB.
    write_skills(tmp_path / "big", 60, description="d" * 1000)
    for folder in (tmp_path / "big").iterdir():
        for n in range(80):
            (folder / f"file-with-a-rather-long-name-{n:03d}.md").write_text("x")
    with serve_http([str(tmp_path / "big"), "--no-digest-cache"]) as server:
        assert "(it reads at most 512 KiB of entries;" in server.startup_log
        host = json.loads(run_cli("check", "--json", server.url).text.splitlines()[-1])["host_limits"]
        assert host["stopped"] == "bytes"
        assert host["kept_bytes"] <= 512 * 1024 < host["kept_bytes"] + (host["listed_bytes"] // host["listed"]) * 2
    write_skills(tmp_path / "small", 30)
    with serve_http([str(tmp_path / "small"), "--no-digest-cache", "--page-size", "1"]) as server:
        assert "(it reads at most 20 pages;" in server.startup_log
        host = json.loads(run_cli("check", "--json", server.url).text.splitlines()[-1])["host_limits"]
        assert (host["kept"], host["pages_read"], host["stopped"], len(host["dropped"])) == (20, 20, "pages", 10)


def test_no_warning_when_the_listed_set_fits_and_listing_rules_make_it_fit(tmp_path: Path) -> None:
    write_skills(tmp_path / "skills", 130)
    listed = ["--unlist", "**", "--list", "skill-0*"]  # skill-000 .. skill-099
    with serve_http([str(tmp_path / "skills"), "--no-digest-cache", *listed]) as server:
        assert HOST_LINE not in server.startup_log
        host = json.loads(run_cli("check", "--json", server.url).text.splitlines()[-1])["host_limits"]
        assert (host["listed"], host["kept"], host["stopped"], host["dropped"]) == (100, 100, None, [])


def test_serve_refuses_listing_rules_for_a_published_catalog(tmp_path: Path) -> None:
    result = run_cli("serve", f"file://{tmp_path}/store", "--list", "a/**", "--stdio")
    assert result.code == 2
    assert "a published catalog lists what its publisher chose" in result.err
    assert "skillwire publish --list/--unlist" in result.err


def test_publish_carries_the_listing_to_a_replica(tmp_path: Path) -> None:
    uris = write_skills(tmp_path / "skills", 130)
    store = f"file://{tmp_path / 'store'}"
    published = run_cli("publish", str(tmp_path / "skills"), store, "--unlist", "**", "--list", "skill-00?")
    assert published.code == 0, published.err
    assert "; 120 unlisted (served by address, not in skills/list)" in published.err
    with serve_http([store]) as server:
        assert HOST_LINE not in server.startup_log
        assert list_uris(server.url) == uris[:10]
        assert call(server.url, "skills/get", {"uri": uris[129]})["skill"]["uri"] == uris[129]
