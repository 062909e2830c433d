"""Catalog unit tests (no server): discovery, roots, overlap, ignore rules, digests, MIME types, the
persistent digest cache, skills defined in code, keyset paging, directory pages and atomic refresh."""

from __future__ import annotations

import hashlib
import logging
import os
import sqlite3
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import pytest

from skillwire.catalog.catalog import SkillCatalog
from skillwire.catalog.digests import DigestCache, hash_file, pack_stat
from skillwire.catalog.filesystem import SkillRoot
from skillwire.catalog.inline import InlineSkills
from skillwire.catalog.snapshot import (
    CatalogSnapshot,
    MemoryContent,
    skill_md_resource,
)
from skillwire.core.errors import InvalidCursor, InvalidSkillURI
from skillwire.core.protocol import DIRECTORY_MIME_TYPE
from skillwire.core.protocol import SPEC_META_PREFIX as META_PREFIX
from support.skills import skill_md, write_file, write_skill

PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89"


def age(root: Path, seconds: float = 3600) -> None:
    """Move every mtime into the past, so the digest cache persists the files (not 'racy')."""
    past = time.time() - seconds
    for dirpath, _dirs, names in os.walk(root):
        for name in names:
            os.utime(os.path.join(dirpath, name), (past, past))


def file_uris(snapshot: CatalogSnapshot, skill_uri: str) -> set[str]:
    return {f.uri for f in snapshot.skill_by_uri[skill_uri].entry.files}


def all_listed(snapshot: CatalogSnapshot, limit: int = 1000) -> list[str]:
    uris: list[str] = []
    cursor: str | None = None
    while True:
        page, cursor = snapshot.list_page(cursor, limit)
        uris += [s.uri for s in page]
        if cursor is None:
            return uris


# -- discovery ------------------------------------------------------------------------------------------


def test_discovery_at_any_depth(tmp_path: Path) -> None:
    write_skill(tmp_path, "top")
    write_skill(tmp_path, "a/b/mid")
    write_skill(tmp_path, "a/b/c/d/e/deep")
    write_file(tmp_path / "a" / "not-a-skill" / "README.md", "no SKILL.md here")
    write_file(tmp_path / "a" / "b" / "c" / "skill.md", "lower-case name is not a skill")
    write_skill(tmp_path, "node_modules/pkg")  # ignored folders are never searched
    write_skill(tmp_path, "a/.git/hooks")
    snapshot = SkillCatalog([tmp_path]).snapshot
    assert sorted(snapshot.skill_by_uri) == [
        "skill://a/b/c/d/e/deep/SKILL.md",
        "skill://a/b/mid/SKILL.md",
        "skill://top/SKILL.md",
    ]
    assert snapshot.skipped == ()
    # A folder without SKILL.md publishes nothing.
    assert not any("not-a-skill" in uri for uri in snapshot.files)
    assert "skill://a/b/c/skill.md" not in snapshot.files


def test_nested_skills_are_published_flat_and_listed_by_the_enclosing_skill(tmp_path: Path) -> None:
    write_skill(tmp_path, "outer", {"guide.md": "outer guide"})
    write_skill(tmp_path, "outer/inner", {"ref.md": "inner ref", "deeper/x.txt": "x"})
    write_skill(tmp_path, "outer/inner/innermost")
    snapshot = SkillCatalog([tmp_path]).snapshot
    outer, inner, innermost = (
        "skill://outer/SKILL.md",
        "skill://outer/inner/SKILL.md",
        "skill://outer/inner/innermost/SKILL.md",
    )
    assert set(snapshot.skill_by_uri) == {outer, inner, innermost}
    assert file_uris(snapshot, outer) == {
        outer,
        "skill://outer/guide.md",
        inner,
        "skill://outer/inner/ref.md",
        "skill://outer/inner/deeper/x.txt",
        innermost,
    }
    assert file_uris(snapshot, inner) == {
        inner,
        "skill://outer/inner/ref.md",
        "skill://outer/inner/deeper/x.txt",
        innermost,
    }
    assert file_uris(snapshot, innermost) == {innermost}
    # Flat publication: each entry is a plain entry, no nesting marker.
    for uri in (outer, inner, innermost):
        assert set(snapshot.skill_by_uri[uri].wire) == {"uri", "frontmatter", "resources"}
    assert all_listed(snapshot) == sorted([outer, inner, innermost])
    # The same file is listed by both skills with the same digest and size.
    by_outer = {f.uri: f for f in snapshot.skill_by_uri[outer].entry.files}
    by_inner = {f.uri: f for f in snapshot.skill_by_uri[inner].entry.files}
    assert by_outer["skill://outer/inner/ref.md"] == by_inner["skill://outer/inner/ref.md"]
    # One object per file, in both manifests and in what the snapshot serves from, each file once.
    assert all(f is by_outer[uri] is snapshot.files[uri] for uri, f in by_inner.items())
    assert len(snapshot.files) == len(by_outer) == 6


def test_roots_with_prefixes_and_another_scheme(tmp_path: Path) -> None:
    write_skill(tmp_path / "one", "alpha")
    write_skill(tmp_path / "two", "beta", {"notes.md": "n"})
    write_skill(tmp_path / "three", "gamma")
    write_skill(tmp_path / "four", "delta")
    catalog = SkillCatalog(
        [
            tmp_path / "one",
            SkillRoot(tmp_path / "two", prefix=("acme",), scheme="github"),
            SkillRoot.parse(f"{tmp_path / 'three'}=github://org/repo"),
            SkillRoot.parse(f"{tmp_path / 'four'}=acme/tools"),
        ]
    )
    snapshot = catalog.snapshot
    assert sorted(snapshot.skill_by_uri) == [
        "github://acme/beta/SKILL.md",
        "github://org/repo/gamma/SKILL.md",
        "skill://acme/tools/delta/SKILL.md",
        "skill://alpha/SKILL.md",
    ]
    assert file_uris(snapshot, "github://acme/beta/SKILL.md") == {
        "github://acme/beta/SKILL.md",
        "github://acme/beta/notes.md",
    }
    assert snapshot.schemes == frozenset({"skill", "github"})
    # skills/list covers every scheme.
    assert len(all_listed(snapshot)) == 4
    # Directories exist per scheme.
    page = snapshot.directory_page("github://org/repo", None, 10)
    assert page is not None
    assert [i["uri"] for i in page.items] == ["github://org/repo/gamma"]


def test_skill_root_parse_forms(tmp_path: Path) -> None:
    assert SkillRoot.parse(str(tmp_path)) == SkillRoot(tmp_path)
    assert SkillRoot.parse(f"{tmp_path}=github://org/repo") == SkillRoot(tmp_path, ("org", "repo"), "github")
    assert SkillRoot.parse(f"{tmp_path}=/acme/tools/") == SkillRoot(tmp_path, ("acme", "tools"))
    with pytest.raises(InvalidSkillURI):
        SkillRoot.parse(f"{tmp_path}=acme/../etc")


def test_overlapping_sources_are_skipped_with_a_reason_never_merged(tmp_path: Path) -> None:
    write_skill(tmp_path / "first", "same", {"a.md": "from first"}, description="First.")
    write_skill(tmp_path / "second", "same", {"b.md": "from second"}, description="Second.")
    write_skill(tmp_path / "second", "other")
    snapshot = SkillCatalog([tmp_path / "first", tmp_path / "second"]).snapshot
    entry = snapshot.skill_by_uri["skill://same/SKILL.md"].entry
    assert entry.description == "First."
    assert file_uris(snapshot, "skill://same/SKILL.md") == {"skill://same/SKILL.md", "skill://same/a.md"}
    assert "skill://same/b.md" not in snapshot.files  # never silently merged
    assert snapshot.files["skill://same/SKILL.md"].read().decode().count("First.") == 1
    assert "skill://other/SKILL.md" in snapshot.skill_by_uri  # the rest of the second source is served
    [skip] = snapshot.skipped
    assert skip.location == str(tmp_path / "second" / "same")
    assert "overlaps a skill from another source" in skip.reason
    assert "skill://same" in skip.reason


def test_overlap_of_a_skill_inside_another_sources_skill_both_orders(tmp_path: Path) -> None:
    write_skill(tmp_path / "a", "billing")  # skill://acme/billing
    write_skill(tmp_path / "b", "refunds")  # skill://acme/billing/refunds
    write_skill(tmp_path / "c", "payroll")  # skill://acme/payroll: a sibling, fine
    outer = SkillRoot(tmp_path / "a", prefix=("acme",))
    inner = SkillRoot(tmp_path / "b", prefix=("acme", "billing"))
    sibling = SkillRoot(tmp_path / "c", prefix=("acme",))

    snapshot = SkillCatalog([outer, inner, sibling]).snapshot
    assert set(snapshot.skill_by_uri) == {"skill://acme/billing/SKILL.md", "skill://acme/payroll/SKILL.md"}
    [skip] = snapshot.skipped
    assert "already serves the skill at acme/billing" in skip.reason

    snapshot = SkillCatalog([inner, outer, sibling]).snapshot
    assert set(snapshot.skill_by_uri) == {
        "skill://acme/billing/refunds/SKILL.md",
        "skill://acme/payroll/SKILL.md",
    }
    [skip] = snapshot.skipped
    assert "already serves skills below this path" in skip.reason
    # Sibling skills from different sources share the prefix directory.
    page = snapshot.directory_page("skill://acme", None, 10)
    assert page is not None
    assert [i["name"] for i in page.items] == ["billing", "payroll"]


def test_code_skill_overlapping_a_folder_or_another_code_skill_is_skipped(tmp_path: Path) -> None:
    write_skill(tmp_path, "shared", {"disk.md": "disk"})
    catalog = SkillCatalog([tmp_path])
    catalog.add_files("shared", {"SKILL.md": skill_md("shared"), "code.md": "code"})
    catalog.add_files("acme/x", {"SKILL.md": skill_md("x", "First."), "a.txt": "A"})
    catalog.add_files("acme/x", {"SKILL.md": skill_md("x", "Second."), "b.txt": "B"})
    snapshot = catalog.snapshot
    assert file_uris(snapshot, "skill://shared/SKILL.md") == {"skill://shared/SKILL.md", "skill://shared/disk.md"}
    assert "skill://shared/code.md" not in snapshot.files
    assert snapshot.skill_by_uri["skill://acme/x/SKILL.md"].entry.description == "First."
    assert file_uris(snapshot, "skill://acme/x/SKILL.md") == {"skill://acme/x/SKILL.md", "skill://acme/x/a.txt"}
    assert "skill://acme/x/b.txt" not in snapshot.files  # the second definition is not merged in
    reasons = sorted(s.reason for s in snapshot.skipped)
    assert len(reasons) == 2
    assert all("overlaps a skill from another source" in r for r in reasons)


# -- ignore rules ---------------------------------------------------------------------------------------

IGNORED_FILES = (".git/config", ".git/objects/ab/cdef", ".env", ".env.local", ".DS_Store", "x.swp", "x~")


def test_ignore_list_is_never_in_a_manifest_nor_readable(tmp_path: Path) -> None:
    folder = write_skill(tmp_path, "s", {"ok.md": "fine", "sub/ok.txt": "fine"})
    for name in IGNORED_FILES:
        write_file(folder / name, "SECRET-VALUE")
        write_file(folder / "sub" / name, "SECRET-VALUE")
    # Enough junk in .git to break the 512-file limit if it counted.
    for i in range(600):
        write_file(folder / ".git" / "objects" / f"{i:03}", "x")
    snapshot = SkillCatalog([tmp_path]).snapshot
    assert snapshot.skipped == ()
    assert file_uris(snapshot, "skill://s/SKILL.md") == {
        "skill://s/SKILL.md",
        "skill://s/ok.md",
        "skill://s/sub/ok.txt",
    }
    assert set(snapshot.files) == file_uris(snapshot, "skill://s/SKILL.md")
    for f in snapshot.files.values():
        assert b"SECRET-VALUE" not in f.read()
    page = snapshot.directory_page("skill://s", None, 100)
    assert page is not None
    assert [i["uri"] for i in page.items] == ["skill://s/SKILL.md", "skill://s/ok.md", "skill://s/sub"]
    assert not any(d.startswith("skill://s/.git") for d in snapshot.directory_uris())


def test_skillignore_has_gitignore_semantics(tmp_path: Path) -> None:
    write_file(tmp_path / ".skillignore", "*.log\n!keep.log\nbuild/\n")
    folder = write_skill(
        tmp_path,
        "s",
        {
            "a.log": "ignored",
            "keep.log": "negated, so kept",
            "build/out.bin": "directory pattern",
            "notes/build": "a FILE named build is not matched by 'build/'",
            "secret.txt": "ignored by the skill's own .skillignore",
            "docs/draft.md": "anchored pattern",
            "docs/final.md": "kept",
            "nested/docs/draft.md": "an anchored pattern does not match deeper",
        },
    )
    write_file(folder / ".skillignore", "secret.txt\n/docs/draft.md\n")
    write_skill(tmp_path, "sibling", {"secret.txt": "the other skill's .skillignore does not apply here"})
    snapshot = SkillCatalog([tmp_path]).snapshot
    assert file_uris(snapshot, "skill://s/SKILL.md") == {
        "skill://s/SKILL.md",
        "skill://s/keep.log",
        "skill://s/notes/build",
        "skill://s/docs/final.md",
        "skill://s/nested/docs/draft.md",
    }
    assert file_uris(snapshot, "skill://sibling/SKILL.md") == {
        "skill://sibling/SKILL.md",
        "skill://sibling/secret.txt",
    }
    assert not any(uri.endswith(".skillignore") for uri in snapshot.files)


def test_a_deeper_skillignore_overrides_a_shallower_one(tmp_path: Path) -> None:
    write_file(tmp_path / ".skillignore", "*.log\n")
    folder = write_skill(tmp_path, "s", {"keep.log": "re-included", "other.log": "still ignored", "notes.md": "n"})
    write_file(folder / ".skillignore", "!keep.log\nnotes.md\n")
    write_skill(tmp_path, "t", {"keep.log": "the override applies only below s/"})
    snapshot = SkillCatalog([tmp_path]).snapshot
    assert file_uris(snapshot, "skill://s/SKILL.md") == {"skill://s/SKILL.md", "skill://s/keep.log"}
    assert file_uris(snapshot, "skill://t/SKILL.md") == {"skill://t/SKILL.md"}


def test_skillignore_can_hide_a_whole_skill(tmp_path: Path) -> None:
    write_file(tmp_path / ".skillignore", "drafts/\n")
    write_skill(tmp_path, "drafts/wip")
    write_skill(tmp_path, "ready")
    snapshot = SkillCatalog([tmp_path]).snapshot
    assert list(snapshot.skill_by_uri) == ["skill://ready/SKILL.md"]


# -- digests, MIME types, text vs blob --------------------------------------------------------------------


def test_digests_and_sizes_equal_hashlib_over_the_file_bytes(tmp_path: Path) -> None:
    big_text = ("line of text é\n" * 120_000).encode()  # > 1 MiB: the chunked hashing path
    big_binary = os.urandom(1_500_000)
    folder = write_skill(
        tmp_path,
        "s",
        {"a.md": "hello", "empty.txt": "", "big.txt": big_text, "big.bin": big_binary, "logo.png": PNG},
    )
    snapshot = SkillCatalog([tmp_path]).snapshot
    entry = snapshot.skill_by_uri["skill://s/SKILL.md"].entry
    assert len(entry.files) == 6
    for item in entry.files:
        data = (folder / item.uri.removeprefix("skill://s/")).read_bytes()
        assert item.digest == "sha256:" + hashlib.sha256(data).hexdigest()
        assert item.size == len(data)
        served = snapshot.files[item.uri]
        assert (served.digest, served.size) == (item.digest, item.size)
        assert served.read() == data
    assert entry.file("skill://s/empty.txt") is not None
    assert snapshot.files["skill://s/empty.txt"].digest == "sha256:" + hashlib.sha256(b"").hexdigest()


def test_mime_types_and_text_versus_blob(tmp_path: Path) -> None:
    write_skill(
        tmp_path,
        "s",
        {
            "notes.txt": "plain UTF-8 text — ünïcödé",
            "logo.png": PNG,
            "script.py": "print('hi')\n",
            "data.unknownext": b"\x00\x01\x02binary",
            "readme.unknownext2": "utf-8 text with an unknown extension",
            "nul.txt": b"text with a NUL\x00 byte",
            "latin1.txt": "caf\xe9".encode("latin-1"),
            "big.txt": ("é" * 700_000).encode(),
            "big-nul.txt": b"a" * 1_200_000 + b"\x00",
        },
    )
    files = SkillCatalog([tmp_path]).snapshot.files

    def kind(name: str) -> tuple[str, bool]:
        f = files[f"skill://s/{name}"]
        return f.mime_type, f.is_text

    assert kind("SKILL.md") == ("text/markdown", True)
    assert kind("notes.txt") == ("text/plain", True)
    assert kind("logo.png") == ("image/png", False)
    assert kind("script.py") == ("text/x-python", True)
    assert kind("data.unknownext") == ("application/octet-stream", False)
    assert kind("readme.unknownext2") == ("text/plain", True)
    assert kind("nul.txt") == ("text/plain", False)
    assert kind("latin1.txt") == ("text/plain", False)
    assert kind("big.txt") == ("text/plain", True)
    assert kind("big-nul.txt") == ("text/plain", False)


def test_hashing_never_reads_past_the_size_stat_reported(tmp_path: Path) -> None:
    small = write_file(tmp_path / "small.txt", b"x" * 100)
    big = write_file(tmp_path / "big.txt", b"y" * (3 * 1024 * 1024))
    # As if each file grew after it was stat-ed: one byte past the expected size is enough to tell.
    assert hash_file(str(small), 10)[1] == 11
    assert hash_file(str(big), 2 * 1024 * 1024)[1] == 2 * 1024 * 1024 + 1
    digest, read = hash_file(str(big), big.stat().st_size)
    assert read == big.stat().st_size
    assert digest.digest == "sha256:" + hashlib.sha256(big.read_bytes()).hexdigest()
    st = small.stat()
    small.write_bytes(b"x" * 200)
    with pytest.raises(OSError, match="changed size"):
        DigestCache().digest(str(small), pack_stat(st))


# -- the persistent digest cache ------------------------------------------------------------------------


def _tree(root: Path, skills: int = 5, files_per_skill: int = 3) -> int:
    for i in range(skills):
        write_skill(root, f"skill-{i}", {f"f{j}.md": f"skill {i} file {j}" for j in range(files_per_skill)})
    return skills * (files_per_skill + 1)


def test_second_catalog_with_the_same_cache_file_hashes_nothing(tmp_path: Path) -> None:
    root, db = tmp_path / "skills", tmp_path / "cache" / "digests.sqlite"
    total = _tree(root)
    age(root)
    first_cache = DigestCache(db)
    first = SkillCatalog([root], digest_cache=first_cache).snapshot
    assert first_cache.hashed == total
    assert db.is_file()

    second_cache = DigestCache(db)
    second = SkillCatalog([root], digest_cache=second_cache).snapshot
    assert second_cache.hashed == 0
    assert second_cache.hits >= total
    assert {u: f.digest for u, f in second.files.items()} == {u: f.digest for u, f in first.files.items()}


def test_after_editing_one_file_refresh_rehashes_exactly_that_file(tmp_path: Path) -> None:
    root, db = tmp_path / "skills", tmp_path / "digests.sqlite"
    _tree(root)
    age(root)
    SkillCatalog([root], digest_cache=DigestCache(db)).refresh()
    cache = DigestCache(db)
    catalog = SkillCatalog([root], digest_cache=cache)
    before = catalog.snapshot
    assert cache.hashed == 0
    catalog.refresh()
    assert cache.hashed == 0  # nothing changed, nothing hashed
    edited = root / "skill-2" / "f1.md"
    edited.write_text("edited content")
    after = catalog.refresh()
    assert cache.hashed == 1
    uri = "skill://skill-2/f1.md"
    assert after.files[uri].digest == "sha256:" + hashlib.sha256(b"edited content").hexdigest()
    assert after.files[uri].digest != before.files[uri].digest
    changed = {u for u in after.files if after.files[u].digest != before.files[u].digest}
    assert changed == {uri}


def test_hash_reads_the_file_without_looking_it_up_and_stores_what_it_read(tmp_path: Path) -> None:
    # What a scan calls for each file `cached` just missed: one look-up per file, not two.
    path = tmp_path / "f.md"
    path.write_bytes(b"first")
    cache = DigestCache()
    stat = pack_stat(os.lstat(path))
    first = cache.hash(str(path), stat)
    assert first.digest == "sha256:" + hashlib.sha256(b"first").hexdigest()
    assert (cache.hashed, cache.hits) == (1, 0)
    assert cache.cached(str(path), stat) == first
    assert cache.hash(str(path), stat) == first  # hashed again, although it is cached
    assert (cache.hashed, cache.hits) == (2, 1)


def test_the_cache_file_keeps_one_row_per_path_across_edits(tmp_path: Path) -> None:
    root, db = tmp_path / "skills", tmp_path / "digests.sqlite"
    total = _tree(root, skills=2, files_per_skill=2)
    age(root)
    catalog = SkillCatalog([root], digest_cache=DigestCache(db))
    catalog.refresh()
    edited = root / "skill-1" / "f0.md"
    for round_ in range(3):
        edited.write_text(f"edit {round_}")
        age(root)  # old enough to be persisted
        catalog.refresh()
    with sqlite3.connect(db) as conn:
        rows = conn.execute("SELECT path, digest FROM digests").fetchall()
    assert len(rows) == total
    assert len({path for path, _ in rows}) == total
    assert ("sha256:" + hashlib.sha256(b"edit 2").hexdigest()) in {digest for _, digest in rows}
    fresh = DigestCache(db)
    SkillCatalog([root], digest_cache=fresh).refresh()
    assert fresh.hashed == 0


def test_a_restart_after_an_edit_still_keeps_one_row_per_path(tmp_path: Path) -> None:
    # A cold start's flush skips deleting older rows (its file had none); a restart's file has them, so
    # an edit made while the server was down must still replace the path's row, not add one.
    root, db = tmp_path / "skills", tmp_path / "digests.sqlite"
    total = _tree(root, skills=2, files_per_skill=2)
    age(root)
    SkillCatalog([root], digest_cache=DigestCache(db)).refresh()
    (root / "skill-1" / "f0.md").write_text("edited while down")
    age(root)
    SkillCatalog([root], digest_cache=DigestCache(db)).refresh()
    with sqlite3.connect(db) as conn:
        rows = conn.execute("SELECT path, digest FROM digests").fetchall()
    assert len(rows) == total
    assert len({path for path, _ in rows}) == total
    assert ("sha256:" + hashlib.sha256(b"edited while down").hexdigest()) in {digest for _, digest in rows}


def test_recently_modified_files_are_not_persisted(tmp_path: Path) -> None:
    root, db = tmp_path / "skills", tmp_path / "digests.sqlite"
    total = _tree(root, skills=2, files_per_skill=1)
    age(root)
    (root / "skill-0" / "f0.md").touch()  # the only file that is fresh
    SkillCatalog([root], digest_cache=DigestCache(db)).refresh()
    cache = DigestCache(db)
    SkillCatalog([root], digest_cache=cache).refresh()
    assert total == 4
    assert cache.hashed == 1  # only the fresh file, whose write might still have been under way


def test_a_corrupt_cache_file_costs_a_rehash_not_a_failure(tmp_path: Path) -> None:
    root, db = tmp_path / "skills", tmp_path / "digests.sqlite"
    total = _tree(root, skills=2)
    db.write_bytes(b"this is not a sqlite database" * 10)
    cache = DigestCache(db)
    snapshot = SkillCatalog([root], digest_cache=cache).snapshot
    assert len(snapshot) == 2
    assert cache.hashed == total


def test_frontmatter_with_a_lone_surrogate_is_cached_and_read_back(tmp_path: Path) -> None:
    # A "\ud800" escape in YAML decodes to a lone surrogate, which UTF-8 cannot carry: its row is stored
    # escaped (json's encoder, where pydantic-core refuses). The flush used to raise UnicodeEncodeError.
    root, db = tmp_path / "skills", tmp_path / "digests.sqlite"
    write_skill(root, "odd", extra='metadata:\n  note: "x \\ud800 y"\n')
    age(root)
    first = SkillCatalog([root], digest_cache=DigestCache(db)).snapshot
    [entry] = [skill.entry for skill in first.skill_by_uri.values()]
    assert entry.frontmatter["metadata"] == {"note": "x \ud800 y"}
    again = DigestCache(db)
    second = SkillCatalog([root], digest_cache=again).snapshot
    assert again.hashed == 0  # the SKILL.md's digest and frontmatter both came from the file
    assert [skill.entry.frontmatter for skill in second.skill_by_uri.values()] == [entry.frontmatter]


def test_a_root_whose_path_is_not_utf8_is_served_without_its_cache_file(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    # Its files' paths cannot be TEXT keys: one warning, and the catalog is served (the flush used to raise).
    root, db = tmp_path / os.fsdecode(b"sk\xffills"), tmp_path / "digests.sqlite"
    total = _tree(root, skills=2, files_per_skill=1)
    age(root)
    caplog.set_level(logging.WARNING, logger="skillwire.catalog")
    snapshot = SkillCatalog([root], digest_cache=DigestCache(db)).snapshot
    assert len(snapshot) == 2
    assert [r.getMessage() for r in caplog.records if "cannot be written" in r.getMessage()]
    again = DigestCache(db)
    SkillCatalog([root], digest_cache=again).refresh()
    assert again.hashed == total


# -- skills defined in code -----------------------------------------------------------------------------


def test_add_files_publishes_an_in_memory_skill(tmp_path: Path) -> None:
    catalog = SkillCatalog()
    catalog.add_files(
        "acme/hello",
        {"SKILL.md": skill_md("hello"), "notes/a.md": "note", "logo.png": PNG},
    )
    snapshot = catalog.snapshot
    entry = snapshot.skill_by_uri["skill://acme/hello/SKILL.md"].entry
    assert {f.uri for f in entry.files} == {
        "skill://acme/hello/SKILL.md",
        "skill://acme/hello/notes/a.md",
        "skill://acme/hello/logo.png",
    }
    for item in entry.files:
        served = snapshot.files[item.uri]
        assert isinstance(served.content, MemoryContent)
        assert item.digest == "sha256:" + hashlib.sha256(served.read()).hexdigest()
    assert snapshot.files["skill://acme/hello/logo.png"].mime_type == "image/png"
    assert not snapshot.files["skill://acme/hello/logo.png"].is_text
    assert snapshot.files["skill://acme/hello/SKILL.md"].mime_type == "text/markdown"


def test_decorated_function_returning_a_folder(tmp_path: Path) -> None:
    folder = write_skill(tmp_path, "src/refunds", {"examples/email.md": "Dear customer"})
    catalog = SkillCatalog()

    @catalog.skill("acme/billing/refunds")
    def refunds() -> Path:
        return folder

    assert refunds() == folder  # the decorator hands the function back unchanged
    snapshot = catalog.snapshot
    assert list(snapshot.skill_by_uri) == ["skill://acme/billing/refunds/SKILL.md"]
    assert file_uris(snapshot, "skill://acme/billing/refunds/SKILL.md") == {
        "skill://acme/billing/refunds/SKILL.md",
        "skill://acme/billing/refunds/examples/email.md",
    }
    assert snapshot.files["skill://acme/billing/refunds/examples/email.md"].read() == b"Dear customer"


def test_every_way_of_adding_a_skill_in_python_drops_the_cached_snapshot_and_takes_a_scheme(tmp_path: Path) -> None:
    # The catalog's four adders are InlineSkills' own (one definition): `skill()` used to keep a stale
    # snapshot (the decorated skill missing until something else dropped it), and only it took `scheme=`.
    folder = write_skill(tmp_path, "src/one", {})
    catalog = SkillCatalog()
    assert list(catalog.snapshot.skill_by_uri) == []

    @catalog.skill("acme/one", scheme="docs")
    def one() -> Path:
        return folder

    assert list(catalog.snapshot.skill_by_uri) == ["docs://acme/one/SKILL.md"]
    catalog.add_files("acme/two", {"SKILL.md": skill_md("two")}, scheme="docs")
    catalog.add_folder("acme/three", write_skill(tmp_path, "src/three", {}), scheme="lib")
    catalog.add_dynamic("acme/four", description="Generated", read=lambda path: None, scheme="gen")
    assert sorted(catalog.snapshot.skill_by_uri) == [
        "docs://acme/one/SKILL.md",
        "docs://acme/two/SKILL.md",
        "gen://acme/four/SKILL.md",
        "lib://acme/three/SKILL.md",
    ]
    assert SkillCatalog.add_files.__doc__ == InlineSkills.add_files.__doc__


def test_decorated_function_returning_a_folder_without_skill_md_is_reported(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    write_file(empty / "notes.md", "no SKILL.md")
    catalog = SkillCatalog()
    catalog.add_folder("acme/nothing", empty)
    catalog.add_files("acme/fine", {"SKILL.md": skill_md("fine")})
    snapshot = catalog.snapshot
    assert list(snapshot.skill_by_uri) == ["skill://acme/fine/SKILL.md"]
    [skip] = snapshot.skipped
    assert skip.location == "code:skill://acme/nothing"
    assert "has no SKILL.md at its top" in skip.reason


def test_decorated_folder_with_a_misnamed_skill_is_skipped(tmp_path: Path) -> None:
    folder = write_skill(tmp_path, "refunds")
    catalog = SkillCatalog()
    catalog.add_folder("acme/billing/returns", folder)
    snapshot = catalog.snapshot
    assert len(snapshot) == 0
    [skip] = snapshot.skipped
    assert "does not match its folder 'returns'" in skip.reason


def test_dynamic_skill_is_published_with_dynamic_resources() -> None:
    catalog = SkillCatalog()
    calls: list[str] = []

    def render(path: str) -> str | None:
        calls.append(path)
        return None

    catalog.add_dynamic("reports/daily", description="Today's report.", read=render, frontmatter={"license": "MIT"})
    snapshot = catalog.snapshot
    skill = snapshot.skill_by_uri["skill://reports/daily/SKILL.md"]
    assert skill.entry.resources == "dynamic"
    assert skill.wire == {
        "uri": "skill://reports/daily/SKILL.md",
        "frontmatter": {"name": "daily", "description": "Today's report.", "license": "MIT"},
        "resources": "dynamic",
    }
    assert snapshot.dynamic_skill_for("skill://reports/daily/data/today.csv") == (skill, "data/today.csv")
    assert snapshot.dynamic_skill_for("skill://reports/other.csv") is None
    assert calls == []  # nothing is generated ahead of a read
    assert snapshot.is_directory("skill://reports/daily")


def test_unlisted_code_skills_are_not_listed_but_are_served() -> None:
    catalog = SkillCatalog()
    catalog.add_files("visible", {"SKILL.md": skill_md("visible")})
    catalog.add_files("hidden", {"SKILL.md": skill_md("hidden"), "x.md": "x"}, listed=False)
    catalog.add_dynamic("ghost", description="Unlisted generated skill.", read=lambda p: None, listed=False)

    @catalog.skill("secret", listed=False)
    def secret() -> Mapping[str, str]:
        return {"SKILL.md": skill_md("secret")}

    snapshot = catalog.snapshot
    assert all_listed(snapshot) == ["skill://visible/SKILL.md"]
    items, _ = snapshot.skill_md_page(None, 100)
    assert [i["uri"] for i in items] == ["skill://visible/SKILL.md"]
    for name in ("hidden", "ghost", "secret"):
        assert f"skill://{name}/SKILL.md" in snapshot.skill_by_uri
    assert "skill://hidden/x.md" in snapshot.files


def test_invalid_code_skills_are_skipped_with_reasons() -> None:
    catalog = SkillCatalog()
    catalog.add_files("no-skill-md", {"README.md": "x"})
    catalog.add_files("misnamed", {"SKILL.md": skill_md("other")})
    catalog.add_files("escape", {"SKILL.md": skill_md("escape"), "../outside.md": "x"})
    catalog.add_dynamic("bad-desc", description="", read=lambda p: None)
    catalog.add_files("ok", {"SKILL.md": skill_md("ok")})
    snapshot = catalog.snapshot
    assert list(snapshot.skill_by_uri) == ["skill://ok/SKILL.md"]
    reasons = {s.location: s.reason for s in snapshot.skipped}
    assert "no SKILL.md" in reasons["code:skill://no-skill-md"]
    assert "does not match its folder" in reasons["code:skill://misnamed"]
    assert "relative" in reasons["code:skill://escape"]
    assert "description must not be empty" in reasons["code:skill://bad-desc"]


# -- keyset paging -------------------------------------------------------------------------------------


def test_keyset_paging_over_many_skills(tmp_path: Path) -> None:
    for i in range(250):
        write_skill(tmp_path, f"skill-{i:03}")
    catalog = SkillCatalog([tmp_path])
    snapshot = catalog.snapshot
    pages: list[list[str]] = []
    cursors: list[str] = []
    cursor: str | None = None
    while True:
        page, cursor = snapshot.list_page(cursor, 100)
        pages.append([s.uri for s in page])
        if cursor is None:
            break
        cursors.append(cursor)
    assert [len(p) for p in pages] == [100, 100, 50]
    flat = [u for p in pages for u in p]
    assert len(set(flat)) == 250
    assert flat == sorted(snapshot.skill_by_uri)
    assert len(set(cursors)) == 2

    # Remove a skill before the cursor, and the very skill the cursor points after, then refresh.
    import shutil

    shutil.rmtree(tmp_path / "skill-010")
    shutil.rmtree(tmp_path / "skill-099")
    fresh = catalog.refresh()
    assert len(fresh) == 248
    page, next_cursor = fresh.list_page(cursors[0], 100)
    assert [s.uri for s in page] == pages[1]  # continues exactly where it left off
    assert next_cursor is not None
    last, end = fresh.list_page(next_cursor, 100)
    assert [s.uri for s in last] == pages[2]
    assert end is None


def test_forged_list_cursors_are_refused(tmp_path: Path) -> None:
    for i in range(3):
        write_skill(tmp_path, f"s{i}", {"x.md": "x"})
    snapshot = SkillCatalog([tmp_path]).snapshot
    _, cursor = snapshot.list_page(None, 1)
    assert cursor is not None
    flipped = ("B" if cursor[0] != "B" else "C") + cursor[1:]
    dir_page = snapshot.directory_page("skill://s0", None, 1)
    assert dir_page is not None
    assert dir_page.next_cursor is not None
    for bad in ("QUJDREVGRw", "QUJD.REVG", flipped, cursor + "x", dir_page.next_cursor, ""):
        with pytest.raises(InvalidCursor):
            snapshot.list_page(bad, 1)
    # A cursor is bound to the catalog's secret.
    other = SkillCatalog([tmp_path], cursor_secret=b"another secret").snapshot
    with pytest.raises(InvalidCursor):
        other.list_page(cursor, 1)


# -- directories ----------------------------------------------------------------------------------------


def test_directory_pages_for_skill_root_subdirectory_and_prefix(tmp_path: Path) -> None:
    write_skill(
        tmp_path,
        "acme/billing/refunds",
        {"examples/email.md": "e", "examples/letter.md": "l", "logo.png": PNG},
        extra="license: MIT\n",
    )
    write_skill(tmp_path, "acme/payroll")
    write_skill(tmp_path, "solo")
    snapshot = SkillCatalog([tmp_path]).snapshot

    def names(uri: str) -> list[tuple[str, str]]:
        page = snapshot.directory_page(uri, None, 100)
        assert page is not None, uri
        assert page.next_cursor is None
        return [(i["name"], i["mimeType"]) for i in page.items]

    assert names("skill://acme") == [("billing", DIRECTORY_MIME_TYPE), ("payroll", DIRECTORY_MIME_TYPE)]
    assert names("skill://acme/billing") == [("refunds", DIRECTORY_MIME_TYPE)]
    root = snapshot.directory_page("skill://acme/billing/refunds", None, 100)
    assert root is not None
    by_uri = {i["uri"]: i for i in root.items}
    assert set(by_uri) == {
        "skill://acme/billing/refunds/SKILL.md",
        "skill://acme/billing/refunds/examples",
        "skill://acme/billing/refunds/logo.png",
    }
    skill_md_item = by_uri["skill://acme/billing/refunds/SKILL.md"]
    assert skill_md_item["name"] == "refunds"
    assert skill_md_item["description"] == "A skill for tests."
    assert skill_md_item["mimeType"] == "text/markdown"
    assert skill_md_item["_meta"] == {META_PREFIX + "frontmatter": {"license": "MIT"}}
    assert by_uri["skill://acme/billing/refunds/examples"]["mimeType"] == DIRECTORY_MIME_TYPE
    assert by_uri["skill://acme/billing/refunds/logo.png"] == {
        "uri": "skill://acme/billing/refunds/logo.png",
        "name": "logo.png",
        "mimeType": "image/png",
        "size": len(PNG),
    }
    assert names("skill://acme/billing/refunds/examples") == [
        ("email.md", "text/markdown"),
        ("letter.md", "text/markdown"),
    ]
    assert names("skill://solo") == [("solo", "text/markdown")]  # a SKILL.md is named by its frontmatter
    # Not directories: files, missing paths, trailing slashes.
    assert snapshot.directory_page("skill://acme/billing/refunds/SKILL.md", None, 10) is None
    assert snapshot.directory_page("skill://acme/nope", None, 10) is None
    assert snapshot.directory_page("skill://acme/", None, 10) is None
    assert not snapshot.is_directory("skill://acme/billing/refunds/logo.png")


def test_directory_paging(tmp_path: Path) -> None:
    write_skill(tmp_path, "s", {f"f{i:02}.md": str(i) for i in range(7)})
    snapshot = SkillCatalog([tmp_path]).snapshot
    seen: list[str] = []
    cursor: str | None = None
    pages = 0
    while True:
        page = snapshot.directory_page("skill://s", cursor, 3)
        assert page is not None
        pages += 1
        seen += [i["uri"].rsplit("/", 1)[-1] for i in page.items]
        cursor = page.next_cursor
        if cursor is None:
            break
    assert pages == 3
    assert seen == ["SKILL.md"] + [f"f{i:02}.md" for i in range(7)]
    # A directory cursor is bound to its directory.
    first = snapshot.directory_page("skill://s", None, 3)
    assert first is not None
    assert first.next_cursor is not None
    write_skill(tmp_path, "t")
    snapshot2 = SkillCatalog([tmp_path]).snapshot
    with pytest.raises(InvalidCursor):
        snapshot2.directory_page("skill://t", first.next_cursor, 3)


def brute_force_listings(snapshot: CatalogSnapshot) -> dict[str, list[dict[str, Any]]]:
    """Every directory and its items, derived straight from the served files (and each generated
    skill's SKILL.md), independently of the snapshot's own directory index."""
    leaves = list(snapshot.files) + [s.uri for s in snapshot.skill_by_uri.values() if s.entry.is_dynamic]
    children: dict[str, dict[str, tuple[str, bool]]] = {}
    for leaf in leaves:
        scheme, _, path = leaf.partition("://")
        segments = path.split("/")
        for depth in range(1, len(segments)):
            parent = f"{scheme}://" + "/".join(segments[:depth])
            name = unquote(segments[depth])
            is_file = depth == len(segments) - 1
            kids = children.setdefault(parent, {})
            if is_file or name not in kids:
                kids[name] = (f"{parent}/{segments[depth]}", is_file)
    listings: dict[str, list[dict[str, Any]]] = {}
    for parent, kids in children.items():
        items: list[dict[str, Any]] = []
        for name in sorted(kids):
            uri, is_file = kids[name]
            if not is_file:
                items.append({"uri": uri, "name": name, "mimeType": DIRECTORY_MIME_TYPE})
            elif name == "SKILL.md" and uri in snapshot.skill_by_uri:
                items.append(skill_md_resource(snapshot.skill_by_uri[uri], snapshot.files.get(uri)))
            else:
                f = snapshot.files[uri]
                items.append({"uri": uri, "name": name, "mimeType": f.mime_type, "size": f.size})
        listings[parent] = items
    return listings


def read_directory(snapshot: CatalogSnapshot, uri: str, limit: int) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    cursor: str | None = None
    while True:
        page = snapshot.directory_page(uri, cursor, limit)
        assert page is not None, uri
        items += page.items
        if page.next_cursor is None:
            return items
        cursor = page.next_cursor


def assert_directories_match_files(snapshot: CatalogSnapshot) -> dict[str, list[dict[str, Any]]]:
    expected = brute_force_listings(snapshot)
    # Fresh snapshots over the same skills: the first request of each must build what it needs.
    fresh = CatalogSnapshot(snapshot.skill_by_uri.values(), snapshot.files.values())
    for uri, items in expected.items():
        assert fresh.is_directory(uri), uri
        assert read_directory(fresh, uri, 2) == items, uri
        assert read_directory(fresh, uri, 10_000) == items, uri
    assert snapshot.directory_uris() == sorted(expected)
    for uri in snapshot.directory_uris():
        assert read_directory(snapshot, uri, 1) == expected[uri], uri
    for uri in snapshot.files:
        assert uri in expected or not snapshot.is_directory(uri)
        assert snapshot.directory_page(uri + "/x", None, 10) is None
    for uri in ("skill://", "skill://acme/", "skill:/acme", "acme", "skill://nope", "ftp://acme"):
        assert not snapshot.is_directory(uri)
        assert snapshot.directory_page(uri, None, 10) is None
    return expected


def test_directory_pages_match_a_brute_force_index_of_the_served_files(tmp_path: Path) -> None:
    one, two, three = tmp_path / "one", tmp_path / "two", tmp_path / "three"
    write_skill(one, "acme/billing/refunds", {"examples/a b.md": "e", "examples/ünï.md": "u", "logo.png": PNG})
    write_skill(one, "acme/billing/refunds/inner", {"notes.md": "n", "deep/er/x.md": "x"})
    write_skill(one, "code-review", {"checklist.md": "c"})
    write_skill(one, "code-review/security-audit", {"rules/owasp.md": "o"})
    write_skill(one, "code-review/security-audit/rules/injection", {"cases/sql.md": "s"})
    write_skill(one, "solo", {"my dir/x.md": "x"})
    write_skill(two, "gamma", {"g.md": "g"})
    write_skill(two, "tools/delta")
    write_skill(three, "payroll", {"scripts/run.py": "print()"})
    catalog = SkillCatalog(
        [one, SkillRoot(two, ("org", "repo"), "github"), SkillRoot(three, ("acme",))],
    )
    catalog.add_dynamic("reports/daily", description="Generated.", read=lambda path: None)
    catalog.add_dynamic("acme/generated", description="Generated too.", read=lambda path: None)
    catalog.add_files("hidden", {"SKILL.md": skill_md("hidden"), "x/y.md": "y"}, listed=False)
    # Only code can publish a file and a folder of the same name: the file is what gets listed.
    catalog.add_files("clash", {"SKILL.md": skill_md("clash"), "notes": "n", "notes/inner.md": "i"})
    snapshot = catalog.snapshot
    assert snapshot.skipped == ()

    expected = assert_directories_match_files(snapshot)

    def names(uri: str) -> list[str]:
        return [i["uri"].rsplit("/", 1)[-1] for i in expected[uri]]

    # The scenario covers what it claims: prefixes shared across roots, nested skills, generated
    # skills, another scheme with a prefix, unlisted skills and names that need percent-encoding.
    assert names("skill://acme") == ["billing", "generated", "payroll"]
    assert names("skill://acme/generated") == ["SKILL.md"]
    assert names("skill://acme/billing/refunds") == ["SKILL.md", "examples", "inner", "logo.png"]
    assert names("skill://acme/billing/refunds/inner/deep") == ["er"]
    assert names("skill://acme/billing/refunds/examples") == ["a%20b.md", "%C3%BCn%C3%AF.md"]
    assert names("skill://code-review/security-audit") == ["SKILL.md", "rules"]
    assert names("skill://code-review/security-audit/rules") == ["injection", "owasp.md"]
    assert names("github://org") == ["repo"]
    assert names("github://org/repo/tools") == ["delta"]
    assert names("skill://hidden/x") == ["y.md"]
    assert names("skill://solo") == ["SKILL.md", "my%20dir"]
    assert "skill://reports" in expected
    assert names("skill://clash") == ["SKILL.md", "notes"]
    assert expected["skill://clash"][1]["mimeType"] != DIRECTORY_MIME_TYPE
    assert names("skill://clash/notes") == ["inner.md"]

    # Snapshots assembled by hand need not satisfy what SkillCatalog guarantees: a manifest file
    # that is not served, a skill none of whose files are served, skills nested across sources
    # (including generated ones) whose files the enclosing manifest does not list.
    served = [
        f
        for f in snapshot.files.values()
        if f.uri not in ("skill://acme/billing/refunds/examples/a%20b.md", "skill://acme/billing/refunds/logo.png")
        and f.uri not in ("skill://code-review/SKILL.md", "skill://code-review/checklist.md")
        and not f.uri.startswith("github://org/repo/tools/")
    ]
    partial = CatalogSnapshot(snapshot.skill_by_uri.values(), served)
    expected = assert_directories_match_files(partial)
    assert [i["name"] for i in expected["skill://acme/billing/refunds/examples"]] == ["ünï.md"]
    assert [i["name"] for i in expected["github://org/repo"]] == ["gamma"]
    assert [i["name"] for i in expected["skill://code-review"]] == ["security-audit"]

    outer = SkillCatalog()
    outer.add_files("outer", {"SKILL.md": skill_md("outer"), "a.md": "a"})
    outer.add_dynamic("dyn", description="Generated.", read=lambda path: None)
    inner = SkillCatalog()
    inner.add_files("outer/inner", {"SKILL.md": skill_md("inner"), "sub/b.md": "b"})
    inner.add_dynamic("outer/gen", description="Generated inside.", read=lambda path: None)
    inner.add_files("dyn/static", {"SKILL.md": skill_md("static")})
    outer.add_files("plain", {"SKILL.md": skill_md("plain")})
    inner.add_dynamic("plain/gen", description="Generated inside.", read=lambda path: None)
    deepest = SkillCatalog()
    deepest.add_files("outer/inner/sub/deepest", {"SKILL.md": skill_md("deepest")})
    sources = (outer.snapshot, inner.snapshot, deepest.snapshot)
    mixed = CatalogSnapshot(
        [s for source in sources for s in source.skill_by_uri.values()],
        [f for source in sources for f in source.files.values()],
    )
    expected = assert_directories_match_files(mixed)
    assert [i["name"] for i in expected["skill://outer"]] == ["outer", "a.md", "gen", "inner"]
    assert [i["name"] for i in expected["skill://outer/inner/sub"]] == ["b.md", "deepest"]
    assert [i["name"] for i in expected["skill://dyn"]] == ["dyn", "static"]
    assert [i["name"] for i in expected["skill://plain"]] == ["plain", "gen"]
    # An enclosing skill none of whose own files are served still holds the served nested ones.
    without_outer = CatalogSnapshot(
        mixed.skill_by_uri.values(), [f for f in mixed.files.values() if f.uri.startswith("skill://outer/inner/")]
    )
    expected = assert_directories_match_files(without_outer)
    assert [i["name"] for i in expected["skill://outer"]] == ["gen", "inner"]


def test_directory_index_is_built_on_demand_and_kept_on_the_skill(tmp_path: Path) -> None:
    write_skill(tmp_path, "a", {"sub/x.md": "x"})
    write_skill(tmp_path, "b", {"y.md": "y"})
    snapshot = SkillCatalog([tmp_path]).snapshot
    a, b = snapshot.skill_by_uri["skill://a/SKILL.md"], snapshot.skill_by_uri["skill://b/SKILL.md"]
    assert "_directory_index" not in a.__dict__  # building a snapshot indexes no directory
    assert snapshot.is_directory("skill://a/sub")
    index = a.directory_index()
    assert "_directory_index" not in b.__dict__  # only the skill that was asked about
    # A later snapshot holding the same skill object (an incremental refresh) reuses its index.
    later = CatalogSnapshot(snapshot.skill_by_uri.values(), snapshot.files.values())
    assert later.is_directory("skill://a/sub")
    assert a.directory_index() is index
    assert set(index) == {"skill://a", "skill://a/sub"}


# -- atomic refresh ---------------------------------------------------------------------------------------


def test_refresh_swaps_atomically_and_leaves_the_old_snapshot_intact(tmp_path: Path) -> None:
    write_skill(tmp_path, "keep", {"a.md": "one"})
    write_skill(tmp_path, "gone")
    catalog = SkillCatalog([tmp_path])
    seen: list[tuple[CatalogSnapshot, CatalogSnapshot]] = []
    catalog.on_change(lambda old, new: seen.append((old, new)))
    old = catalog.snapshot
    old_files = dict(old.files)
    old_wire = {u: s.wire for u, s in old.skill_by_uri.items()}
    old_listing = all_listed(old)

    import shutil

    shutil.rmtree(tmp_path / "gone")
    write_file(tmp_path / "keep" / "a.md", "two")
    write_skill(tmp_path, "new")
    new = catalog.refresh()

    assert new is not old
    assert catalog.snapshot is new
    assert seen == [(old, new)]
    assert dict(old.files) == old_files
    assert {u: s.wire for u, s in old.skill_by_uri.items()} == old_wire
    assert all_listed(old) == old_listing == ["skill://gone/SKILL.md", "skill://keep/SKILL.md"]
    assert all_listed(new) == ["skill://keep/SKILL.md", "skill://new/SKILL.md"]
    assert new.files["skill://keep/a.md"].digest != old.files["skill://keep/a.md"].digest
    # A refresh that changes nothing publishes nothing new and notifies nobody.
    catalog.refresh()
    assert len(seen) == 1


def test_listener_failure_does_not_break_refresh(tmp_path: Path) -> None:
    write_skill(tmp_path, "a")
    catalog = SkillCatalog([tmp_path])
    _ = catalog.snapshot
    calls: list[int] = []

    def boom(old: CatalogSnapshot, new: CatalogSnapshot) -> None:
        raise RuntimeError("listener bug")

    ok: Callable[[CatalogSnapshot, CatalogSnapshot], None] = lambda old, new: calls.append(len(new))  # noqa: E731
    catalog.on_change(boom)
    catalog.on_change(ok)
    write_skill(tmp_path, "b")
    assert len(catalog.refresh()) == 2
    assert calls == [2]


def _read_calls() -> int:
    """This process's read system calls so far (Linux's /proc/self/io `syscr`)."""
    for line in Path("/proc/self/io").read_text().splitlines():
        if line.startswith("syscr:"):
            return int(line.split()[1])
    raise AssertionError("/proc/self/io has no syscr line")


@pytest.mark.skipif(not Path("/proc/self/io").is_file(), reason="needs Linux's /proc/self/io")
def test_a_cold_scan_reads_each_file_once_and_parses_skill_md_from_the_bytes_it_hashed(tmp_path: Path) -> None:
    # Issue 25: a SKILL.md was hashed, then opened, read and hashed again to be parsed (10,000 extra
    # opens, reads and hashes on a 10,000-skill cold start).
    root = tmp_path / "skills"
    skills = 40
    for n in range(skills):
        write_skill(root, f"team/skill-{n:02d}", {"references/a.md": "a" * 3000, "scripts/b.py": "print(1)\n"})
    age(root)
    files = skills * 3
    SkillCatalog([root], digest_cache=DigestCache()).refresh()  # the scan's lazy imports are paid here
    before = _read_calls()
    snapshot = SkillCatalog([root], digest_cache=DigestCache()).refresh()
    reads = _read_calls() - before
    assert len(snapshot.skill_by_uri) == skills
    assert files <= reads < files + skills // 2, f"{reads} read calls for {files} files"
    # The frontmatter parsed from those bytes is still what a cache file keeps for the next start.
    db = tmp_path / "digests.sqlite"
    first = SkillCatalog([root], digest_cache=DigestCache(db)).snapshot
    skill_md_uri = "skill://team/skill-00/SKILL.md"
    reread = DigestCache(db).frontmatter(first.files[skill_md_uri].digest)
    assert reread == first.skill_by_uri[skill_md_uri].entry.frontmatter


def test_hashing_a_large_file_holds_pieces_below_glibcs_mmap_threshold_never_the_whole_file(tmp_path: Path) -> None:
    # Issue 25: `serve` fixes glibc's mmap threshold at 128 KiB, so a whole-file buffer above it was a
    # fresh mmap per file whose every page faulted in (1.0 s of a cold start's CPU against 0.6 s in pieces).
    import tracemalloc

    path = tmp_path / "big.md"
    # A two-byte character across every 64 KiB boundary, and one invalid byte sequence file after it.
    data = (b"a" * 65_535 + "é".encode()) * 9
    path.write_bytes(data)
    tracemalloc.start()
    try:
        result, read = hash_file(str(path), len(data))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert (result.digest, result.is_text, read) == ("sha256:" + hashlib.sha256(data).hexdigest(), True, len(data))
    assert peak < 5 * 64 * 1024, f"{peak:,} bytes held while hashing {len(data):,}"
    broken = tmp_path / "broken.bin"
    broken.write_bytes(b"a" * 65_535 + b"\xc3" + b"a" * 100_000)  # a lead byte whose continuation is ASCII
    assert hash_file(str(broken), 165_536)[0].is_text is False
    cut = tmp_path / "cut.md"
    cut.write_bytes(b"a" * 100_000 + b"\xc3")  # ends inside a character
    assert hash_file(str(cut), 100_001)[0].is_text is False
