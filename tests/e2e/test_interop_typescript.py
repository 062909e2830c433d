"""The TypeScript SDK 2.4.0's `SkillsClient` (npm `@modelcontextprotocol/client`), on its defaults, against
`skillwire serve` over Streamable HTTP on 127.0.0.1.

Its `list()` walks pages under the client's `listMaxPages` (64) and fails the whole listing past it, so a
server's page size decides whether a TypeScript host can list a large catalog at all. The catalog here has
10,000 skills (one file each, to keep the scan short): with the old default page of 100 it needed 100 pages
and the TypeScript host saw an error instead of a single skill.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from support.conformance import missing_tools_reason, node_binary, tools_dir
from support.servers import EXAMPLES, serve_http

REPO_ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO_ROOT))
from bench.generate import generate_catalog  # noqa: E402  (bench/ is not an installed package)

SCRIPT = Path(__file__).resolve().parents[1] / "support" / "ts_skills_list.mjs"
SKILLS = 10_000

pytestmark = pytest.mark.skipif(
    missing_tools_reason() is not None
    or not (tools_dir() / "node_modules" / "@modelcontextprotocol" / "client").is_dir(),
    reason=str(missing_tools_reason() or "@modelcontextprotocol/client is not installed (run scripts/install-tools)"),
)


def ts_list(url: str) -> dict[str, object]:
    completed = subprocess.run(
        [str(node_binary()), str(SCRIPT), str(tools_dir() / "node_modules"), url],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr
    result: dict[str, object] = json.loads(completed.stdout.strip().splitlines()[-1])
    return result


@pytest.fixture(scope="module")
def large_catalog(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return generate_catalog(tmp_path_factory.mktemp("ts-interop") / "skills", SKILLS, 1)


@pytest.fixture(scope="module")
def large_server(large_catalog: Path) -> Iterator[str]:
    with serve_http([str(large_catalog), "--no-watch", "--no-digest-cache"], timeout=120) as server:
        yield server.url


def test_typescript_client_on_its_defaults_lists_a_10000_skill_catalog_completely(large_server: str) -> None:
    result = ts_list(large_server)
    assert "error" not in result, result
    uris = result["uris"]
    assert isinstance(uris, list)
    assert result["count"] == SKILLS
    assert len(set(uris)) == SKILLS  # every skill exactly once
    assert sorted(uris) == sorted(f"skill://team{index % 50:02d}/skill-{index:05d}/SKILL.md" for index in range(SKILLS))


def test_a_page_size_of_100_is_what_broke_it(large_catalog: Path) -> None:
    """The failure this default fixes, kept visible: 100 pages exceed the TypeScript client's 64."""
    with serve_http([str(large_catalog), "--no-watch", "--no-digest-cache", "--page-size", "100"], timeout=120) as s:
        result = ts_list(s.url)
    assert "listMaxPages" in str(result.get("error")), result


def test_typescript_client_verifies_the_bundled_examples() -> None:
    with serve_http([str(EXAMPLES), "--no-watch"]) as server:
        result = ts_list(server.url)
    assert "error" not in result, result
    assert "skill://pdf-processing/SKILL.md" in result["uris"]  # type: ignore[operator]
