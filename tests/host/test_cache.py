"""skillwire.host.discovery and skillwire.host.cache: a verified, origin-keyed cache outside discovery paths."""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path

import pytest

from skillwire.core.errors import DigestMismatch, InvalidSkillURI, SizeMismatch, UnsafeCacheLocation
from skillwire.core.manifest import ManifestFile, sha256_digest
from skillwire.core.uri import format_uri
from skillwire.host.cache import MAX_COMPONENT_LENGTH, ContentCache, uri_components
from skillwire.host.discovery import is_inside_discovery_path, skills_discovery_paths

URI = "skill://acme/refunds/SKILL.md"
DATA = b"---\nname: refunds\ndescription: Refund things.\n---\nDo it.\n"
# What every path component the cache makes may look like: ASCII, no separators, never a leading dot.
SAFE_COMPONENT = re.compile(r"^[A-Za-z0-9_%~=-][A-Za-z0-9._%~=-]*\Z")


def listed(uri: str, data: bytes) -> ManifestFile:
    return ManifestFile(uri, sha256_digest(data), len(data))


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "home"


@pytest.fixture
def discovery(tmp_path: Path, home: Path) -> list[Path]:
    return skills_discovery_paths(cwd=tmp_path / "project" / "sub", home=home, environ={})


@pytest.fixture
def cache(tmp_path: Path, discovery: list[Path]) -> ContentCache:
    return ContentCache(tmp_path / "cache" / "content", discovery_paths=discovery)


def make_writable(path: Path) -> None:
    path.chmod(path.stat().st_mode | stat.S_IWUSR)


# -- discovery paths -----------------------------------------------------------------------------------------


def test_discovery_paths_cover_user_project_and_every_parent(tmp_path: Path, home: Path) -> None:
    cwd = tmp_path / "project" / "sub"
    paths = skills_discovery_paths(cwd=cwd, home=home, environ={"CODEX_HOME": str(tmp_path / "codex")})
    for user_dir in (".claude", ".agents", ".codex", ".gemini", ".copilot", ".cursor"):
        assert home / user_dir / "skills" in paths
    assert home / ".config" / "opencode" / "skills" in paths
    assert tmp_path / "codex" / "skills" in paths
    for directory in (cwd, cwd.parent, tmp_path, Path("/")):
        for project_dir in (".claude", ".agents", ".github", ".cursor", ".codex", ".gemini", ".opencode"):
            assert directory / project_dir / "skills" in paths
    assert len(paths) == len(set(paths))
    assert tmp_path / "codex" / "skills" not in skills_discovery_paths(cwd=cwd, home=home, environ={})


def test_inside_a_discovery_path(tmp_path: Path, home: Path, discovery: list[Path]) -> None:
    assert is_inside_discovery_path(home / ".agents/skills/x/y", discovery) == home / ".agents/skills"
    assert is_inside_discovery_path(home / ".agents/skills", discovery) == home / ".agents/skills"
    assert is_inside_discovery_path(home / ".cache/skillwire", discovery) is None
    # Not listed, but a `skills` directory under a dot-directory is scanned by someone (recursively).
    nested = tmp_path / "elsewhere/.vendor/skills/deep"
    assert is_inside_discovery_path(nested, discovery) == tmp_path / "elsewhere/.vendor/skills"
    assert is_inside_discovery_path(tmp_path / "elsewhere/vendor/skills", discovery) is None
    # Symlinks are resolved: a path reaching into a discovery tree through a link is inside it.
    (home / ".claude/skills").mkdir(parents=True)
    (tmp_path / "link").symlink_to(home / ".claude/skills")
    assert is_inside_discovery_path(tmp_path / "link/cache", discovery) == home / ".claude/skills"


# -- the root is refused inside discovery paths -------------------------------------------------------------


@pytest.mark.parametrize(
    "relative_root",
    [
        ".agents/skills/cache",  # the dot-directory rule, with no listed paths at all
        "home/.claude/skills/x",  # a listed user path
        "home/.config/opencode/skills/cache",  # listed, and not under a dot-directory
        "project/.github/skills",  # a listed project path of a parent of cwd
        "home/.config/opencode",  # contains a discovery path: an origin named `skills` would be it
        "project",  # contains `project/.github/skills`, a project path of a parent of cwd
        "home/.skillwire-cache",  # a dot-directory root: origin `skills` would be `.skillwire-cache/skills`
    ],
)
def test_root_inside_a_discovery_path_is_refused(tmp_path: Path, discovery: list[Path], relative_root: str) -> None:
    paths = [] if relative_root.startswith(".agents") else discovery
    with pytest.raises(UnsafeCacheLocation) as caught:
        ContentCache(tmp_path / relative_root, discovery_paths=paths)
    assert caught.value.root.startswith(str(tmp_path.resolve()))
    assert not (tmp_path / relative_root).exists()  # refused before anything was created


def test_root_reaching_a_discovery_path_through_a_symlink_is_refused(
    tmp_path: Path, home: Path, discovery: list[Path]
) -> None:
    target = home / ".config/opencode/skills"
    target.mkdir(parents=True)
    (tmp_path / "innocent").symlink_to(target)
    with pytest.raises(UnsafeCacheLocation, match="inside a skills discovery path"):
        ContentCache(tmp_path / "innocent" / "cache", discovery_paths=discovery)


def test_a_safe_root_is_accepted_and_created_lazily(tmp_path: Path, discovery: list[Path]) -> None:
    cache = ContentCache(tmp_path / "home/.cache/skillwire/content", discovery_paths=discovery)
    assert not cache.root.exists()
    cache.put("work", URI, DATA, listed(URI, DATA))
    assert stat.S_IMODE(cache.root.stat().st_mode) == 0o700


# -- round trip -----------------------------------------------------------------------------------------------


def test_put_then_get_round_trip(cache: ContentCache) -> None:
    expected = listed(URI, DATA)
    assert cache.get("work", URI, expected) is None
    cache.put("work", URI, DATA, expected)
    assert cache.get("work", URI, expected) == DATA
    assert cache.get("other", URI, expected) is None  # the origin is half of the key
    stats = cache.stats()
    assert (stats.hits, stats.misses, stats.tampered) == (1, 2, 0)


def test_files_are_read_only_and_directories_private(cache: ContentCache) -> None:
    cache.put("work", URI, DATA, listed(URI, DATA))
    path = cache.path_for("work", URI, sha256_digest(DATA))
    assert path.read_bytes() == DATA
    assert stat.S_IMODE(path.stat().st_mode) == 0o444
    directory = path.parent
    while directory != cache.root:
        assert stat.S_IMODE(directory.stat().st_mode) == 0o700, directory
        directory = directory.parent
    assert not [p for p in path.parent.iterdir() if p.name.startswith(".tmp-")]  # no temporary file left


def test_new_digest_is_a_new_file_and_old_versions_are_untouched(cache: ContentCache) -> None:
    old, new = DATA, DATA + b"More.\n"
    cache.put("work", URI, old, listed(URI, old))
    old_path = cache.path_for("work", URI, sha256_digest(old))
    old_inode = old_path.stat().st_ino
    cache.put("work", URI, new, listed(URI, new))
    cache.put("work", URI, old, listed(URI, old))  # already there and intact: not rewritten
    assert old_path.stat().st_ino == old_inode
    assert cache.get("work", URI, listed(URI, old)) == old
    assert cache.get("work", URI, listed(URI, new)) == new
    assert len(list(old_path.parent.iterdir())) == 2


def test_put_refuses_bytes_that_do_not_match(cache: ContentCache) -> None:
    expected = listed(URI, DATA)
    with pytest.raises(SizeMismatch):
        cache.put("work", URI, DATA + b"x", expected)
    with pytest.raises(DigestMismatch):
        cache.put("work", URI, DATA.upper(), expected)
    assert not cache.root.exists()  # nothing at all was written
    with pytest.raises(ValueError, match="not skill://acme/other"):
        cache.put("work", "skill://acme/other/SKILL.md", DATA, expected)


# -- tampering ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("replacement", [DATA.replace(b"Do it", b"Rm it"), DATA + b"!", b""])
def test_tampered_file_is_detected_and_deleted(cache: ContentCache, replacement: bytes) -> None:
    expected = listed(URI, DATA)
    cache.put("work", URI, DATA, expected)
    path = cache.path_for("work", URI, expected.digest)
    make_writable(path)
    path.write_bytes(replacement)  # the same size is not enough: the bytes are re-hashed
    assert cache.get("work", URI, expected) is None
    assert not path.exists()
    assert cache.tampered == 1
    cache.put("work", URI, DATA, expected)  # and it can be cached again
    assert cache.get("work", URI, expected) == DATA


def test_a_symlink_in_place_of_a_cached_file_is_refused(cache: ContentCache, tmp_path: Path) -> None:
    expected = listed(URI, DATA)
    cache.put("work", URI, DATA, expected)
    path = cache.path_for("work", URI, expected.digest)
    outside = tmp_path / "outside.md"
    outside.write_bytes(DATA)  # even the *right* bytes behind a link are not served
    path.unlink()
    path.symlink_to(outside)
    assert cache.get("work", URI, expected) is None
    assert not path.is_symlink()
    assert not path.exists()
    assert outside.read_bytes() == DATA  # the link was removed, not its target
    assert cache.tampered == 1


def test_a_symlinked_directory_inside_the_cache_is_refused(cache: ContentCache, tmp_path: Path) -> None:
    expected = listed(URI, DATA)
    cache.put("work", URI, DATA, expected)
    scheme_dir = cache.root / "work" / "skill"
    moved = tmp_path / "moved"
    scheme_dir.rename(moved)  # a complete, valid copy of the tree, now outside the cache
    scheme_dir.symlink_to(moved)
    assert cache.get("work", URI, expected) is None
    assert not scheme_dir.is_symlink()
    assert cache.tampered == 1
    assert (moved / "acme/refunds/SKILL.md").is_dir()  # the target was not touched
    cache.put("work", URI, DATA, expected)  # put replaces the link with a real directory
    assert cache.get("work", URI, expected) == DATA
    assert not scheme_dir.is_symlink()


def test_a_fifo_under_a_content_name_does_not_hang(cache: ContentCache) -> None:
    expected = listed(URI, DATA)
    path = cache.path_for("work", URI, expected.digest)
    path.parent.mkdir(parents=True)
    os.mkfifo(path)
    assert cache.get("work", URI, expected) is None
    assert not path.exists()


def test_put_over_a_tampered_file_rewrites_it(cache: ContentCache) -> None:
    expected = listed(URI, DATA)
    cache.put("work", URI, DATA, expected)
    path = cache.path_for("work", URI, expected.digest)
    make_writable(path)
    path.write_bytes(b"evil")
    cache.put("work", URI, DATA, expected)
    assert path.read_bytes() == DATA
    assert stat.S_IMODE(path.stat().st_mode) == 0o444


# -- paths: origin and uri are recoverable, and every component is safe ---------------------------------------


def test_origin_and_uri_are_recoverable_from_the_path(cache: ContentCache, tmp_path: Path) -> None:
    expected = listed(URI, DATA)
    cache.put("Work.eu", URI, DATA, expected)
    [stored] = [p for p in cache.root.rglob("*") if p.is_file()]  # found on disk, not computed
    assert cache.origin_of(stored) == ("Work.eu", URI)
    assert cache.origin_of(stored.parent) == ("Work.eu", URI)
    assert cache.origin_of(tmp_path / "elsewhere" / "file") is None
    assert cache.origin_of(cache.root / "Work.eu") is None  # no uri part
    assert cache.origin_of(cache.root / "work" / "skill" / "a%41" / "x") is None  # not a canonical encoding


def test_labels_differing_only_in_case_get_distinct_directories(cache: ContentCache) -> None:
    upper = uri_components("Work", URI)[0]
    lower = uri_components("work", URI)[0]
    assert upper.casefold() != lower.casefold()  # so a case-insensitive file system keeps them apart
    assert cache.origin_of(cache.path_for("Work", URI, sha256_digest(DATA))) == ("Work", URI)


@pytest.mark.parametrize(
    "segments",
    [
        ("acme", "a b", "ü", "x:y", "SKILL.md"),
        ("acme", ".claude", "skills", "evil", "SKILL.md"),  # never a dot-directory inside the cache
        ("acme", "...", "a.", "~tilde", "100%", "=sha", "SKILL.md"),
        ("acme", "ü" * 120, "SKILL.md"),  # 720 bytes encoded: split into several components
        ("acme", "a" * (MAX_COMPONENT_LENGTH - 1) + "..x", "SKILL.md"),  # a split right before a dot
    ],
)
def test_odd_but_valid_segments_become_safe_single_components(cache: ContentCache, segments: tuple[str, ...]) -> None:
    uri = format_uri("skill", segments)
    path = cache.path_for("work", uri, sha256_digest(DATA))
    relative = path.relative_to(cache.root).parts
    for component in relative:
        assert SAFE_COMPONENT.match(component), component
        assert len(component) <= MAX_COMPONENT_LENGTH
        assert component not in (".", "..")
    long_segments = sum(len(s) > 30 for s in segments)
    if not long_segments:
        assert len(relative) == 2 + len(segments) + 1  # origin, scheme, one per segment, the content file
    cache.put("work", uri, DATA, listed(uri, DATA))
    assert path.is_file()  # really creatable on this file system
    assert cache.get("work", uri, listed(uri, DATA)) == DATA
    assert cache.origin_of(path) == ("work", uri)


@pytest.mark.parametrize("uri", ["skill://a/%2e%2e/SKILL.md", "skill://a/b%2Fc/SKILL.md", "skill://a//SKILL.md"])
def test_hostile_uris_never_reach_the_file_system(cache: ContentCache, uri: str) -> None:
    with pytest.raises(InvalidSkillURI):
        cache.get("work", uri, listed(uri, DATA))
    with pytest.raises(InvalidSkillURI):
        cache.put("work", uri, DATA, listed(uri, DATA))
    assert not cache.root.exists()


def test_bad_origin_labels_are_refused(cache: ContentCache) -> None:
    for label in ("..", ".x", "a/b", ""):
        with pytest.raises(ValueError, match="origin label"):
            cache.put(label, URI, DATA, listed(URI, DATA))


# -- purge ------------------------------------------------------------------------------------------------------


def test_purge_origin_removes_only_that_origin(cache: ContentCache) -> None:
    other_uri = "skill://acme/refunds/policy.md"
    for origin in ("alpha", "beta"):
        cache.put(origin, URI, DATA, listed(URI, DATA))
        cache.put(origin, other_uri, b"policy", listed(other_uri, b"policy"))
    # A tampered, read-only directory must not stop the purge.
    (cache.root / "alpha" / "skill" / "acme").chmod(0o500)
    assert cache.purge_origin("alpha") == 2
    assert not (cache.root / "alpha").exists()
    assert cache.get("alpha", URI, listed(URI, DATA)) is None
    assert cache.get("beta", URI, listed(URI, DATA)) == DATA
    assert cache.purge_origin("alpha") == 0


def test_purge_does_not_follow_a_symlinked_origin_directory(cache: ContentCache, tmp_path: Path) -> None:
    precious = tmp_path / "precious"
    precious.mkdir()
    (precious / "keep.txt").write_text("keep")
    cache.root.mkdir(parents=True)
    (cache.root / "alpha").symlink_to(precious)
    assert cache.purge_origin("alpha") == 0
    assert not (cache.root / "alpha").exists()
    assert (precious / "keep.txt").read_text() == "keep"
