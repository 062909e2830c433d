"""`ServeOptions` (server/options.py): the catalog and server `skillwire serve` builds, for embedders.

Where the caches go, which cursor secret is used, when callers get per-caller views and the bearer-token
settings, each read from the objects the options build (no server is started).
"""

from __future__ import annotations

import json
from hashlib import sha256
from pathlib import Path

import pytest

from skillwire import ServedSkills, ServeOptions, SkillsExtension
from skillwire.catalog.filesystem import SkillRoot
from skillwire.server.options import http_base_url
from skillwire.server.visibility import PerCallerSkills, StaticTokens
from support.bridge import write_skill


def roots(tmp_path: Path) -> list[SkillRoot]:
    write_skill(tmp_path / "skills", "alpha", "The first skill.")
    return [SkillRoot(tmp_path / "skills")]


def test_the_snapshot_cache_sits_beside_the_digest_cache(tmp_path: Path) -> None:
    digests = tmp_path / "cache" / "digests.sqlite"
    digests.parent.mkdir()
    catalog = ServeOptions(digest_cache=digests).folder_catalog(roots(tmp_path))
    assert len(catalog.snapshot.skill_by_uri) == 1
    catalog.validate()
    written = sorted(p.name for p in digests.parent.iterdir())
    assert "digests.sqlite" in written
    assert any(name.startswith("digests.sqlite.snapshot-") for name in written), written


def test_without_persisted_digests_nothing_is_written(tmp_path: Path) -> None:
    digests = tmp_path / "cache" / "digests.sqlite"
    digests.parent.mkdir()
    options = ServeOptions(digest_cache=digests, persist_digests=False)
    assert options.digest_cache_file() is None
    catalog = options.folder_catalog(roots(tmp_path))
    assert len(catalog.snapshot.skill_by_uri) == 1
    assert list(digests.parent.iterdir()) == []


def test_without_the_snapshot_cache_only_digests_are_written(tmp_path: Path) -> None:
    digests = tmp_path / "cache" / "digests.sqlite"
    digests.parent.mkdir()
    catalog = ServeOptions(digest_cache=digests, snapshot_cache=False).folder_catalog(roots(tmp_path))
    catalog.validate()
    assert not [p.name for p in digests.parent.iterdir() if ".snapshot-" in p.name]


def test_the_cursor_secret_comes_from_the_environment_unless_given(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SKILLWIRE_CURSOR_SECRET", "shared-by-replicas")
    assert ServeOptions().secret() == b"shared-by-replicas"
    assert ServeOptions(cursor_secret=b"given").secret() == b"given"


def test_plain_options_serve_one_catalog_for_everyone(tmp_path: Path) -> None:
    options = ServeOptions(page_size=7, ttl_ms=5, persist_digests=False)
    served = options.extension(options.folder_catalog(roots(tmp_path)))
    assert type(served.extension) is SkillsExtension
    assert served.token_verifier is None
    assert served.auth is None
    assert served.extension.page_size == 7


def test_audience_rules_give_per_caller_views_without_tokens(tmp_path: Path) -> None:
    options = ServeOptions(audiences=("skill://alpha=acme",), persist_digests=False)
    served = options.extension(options.folder_catalog(roots(tmp_path)))
    assert isinstance(served.extension, PerCallerSkills)
    assert served.token_verifier is None


@pytest.mark.anyio
async def test_tokens_give_the_sdk_auth_settings_for_the_base_url(tmp_path: Path) -> None:
    tokens = tmp_path / "tokens.json"
    tokens.write_text(json.dumps({"tokens": [{"client": "ci", "sha256": sha256(b"t0k3n").hexdigest()}]}))
    options = ServeOptions(tokens=tokens, persist_digests=False)
    catalog = options.folder_catalog(roots(tmp_path))
    served = options.extension(catalog, base_url=http_base_url("::1", 8765))
    assert isinstance(served, ServedSkills)
    assert isinstance(served.token_verifier, StaticTokens)
    assert served.auth is not None
    assert str(served.auth.resource_server_url) == "http://[::1]:8765/mcp"
    assert (await served.token_verifier.verify_token("t0k3n")) is not None
    assert (await served.token_verifier.verify_token("wrong")) is None
    assert served.server().name == "skillwire"
    with pytest.raises(ValueError, match="need HTTP"):
        options.extension(catalog)


def test_the_search_tool_is_on_with_its_index_beside_the_digest_cache(tmp_path: Path) -> None:
    digests = tmp_path / "cache" / "digests.sqlite"
    options = ServeOptions(digest_cache=digests)
    served = options.extension(options.folder_catalog(roots(tmp_path)), sources="/srv/skills")
    assert served.extension.finder is not None
    index = options.search_index_file("/srv/skills")
    assert index is not None
    assert index.parent == digests.parent / "search"
    assert index.name.startswith("serve-")
    assert index != options.search_index_file("/srv/other")  # one file per set of sources
    assert ServeOptions(persist_digests=False).search_index_file("/srv/skills") is None  # in memory
    assert ServeOptions(search_index=tmp_path / "mine.sqlite").search_index_file("x") == tmp_path / "mine.sqlite"
    off = ServeOptions(digest_cache=digests, search_tool=False)
    assert off.extension(off.folder_catalog(roots(tmp_path))).extension.finder is None
