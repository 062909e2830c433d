"""`GitTreeSource` applies the folder rules to a tree read from git's objects (catalog/git_tree.py).

A real repository made with git; the scan is compared with `scan_root` of a clone of the same commit, so
"every folder rule applies" is checked against the folder scan itself, not restated here.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from skillwire.catalog.digests import DigestCache
from skillwire.catalog.filesystem import SkillRoot, scan_root
from skillwire.catalog.git import git_environment
from skillwire.catalog.git_tree import GitObjects, GitTreeSource, list_tree
from skillwire.core.errors import GitError
from support.gitserver import GIT_ENV, git, skill_md


def _repo(tmp_path: Path, files: dict[str, str]) -> tuple[Path, str]:
    work = tmp_path / "work"
    work.mkdir()
    git(work, "init", "-q", "-b", "main")
    for rel, text in files.items():
        path = work / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    git(work, "add", "-A", "-f")
    git(work, "commit", "-q", "-m", "files")
    return work, git(work, "rev-parse", "HEAD")


def _source(work: Path, commit: str, root: SkillRoot) -> GitTreeSource:
    repo = work / ".git"
    return GitTreeSource(repo, GitObjects(repo, git_environment), commit, (), root, "git+test", git_environment)


def test_the_scan_of_a_tree_is_the_scan_of_its_folder(tmp_path: Path) -> None:
    many = {f"big/f{i}.txt": "x\n" for i in range(512)}  # 513 files with SKILL.md: over the SEP's limit
    work, commit = _repo(
        tmp_path,
        {
            ".skillignore": "*.log\n",
            "alpha/SKILL.md": skill_md("alpha", "First"),
            "alpha/notes.md": "notes\n",
            "alpha/debug.log": "hidden by the root's .skillignore\n",
            "alpha/.skillignore": "!keep.log\ndrafts/\n",
            "alpha/keep.log": "re-included by the skill's own .skillignore\n",
            "alpha/drafts/wip.md": "a folder the skill's .skillignore hides\n",
            "alpha/.env": "SECRET=1\n",
            "alpha/node_modules/x.js": "ignored by name\n",
            "beta/SKILL.md": skill_md("beta", "Second"),
            "wrong/SKILL.md": skill_md("not-wrong", "Its name is not its folder's"),
            "big/SKILL.md": skill_md("big", "Too many files"),
            **many,
        },
    )
    tree = _source(work, commit, SkillRoot(Path(os.devnull))).scan(DigestCache())
    folder = scan_root(SkillRoot(work), DigestCache())

    def files(result: object) -> dict[str, tuple[str, int]]:
        return {f.uri: (f.digest, f.size) for f in result.files}  # type: ignore[attr-defined]

    assert files(tree) == files(folder)
    assert sorted(f.uri for f in tree.files if f.uri.startswith("skill://alpha/")) == [
        "skill://alpha/SKILL.md",
        "skill://alpha/keep.log",
        "skill://alpha/notes.md",
    ]
    assert sorted(s.entry.uri for s in tree.skills) == sorted(s.entry.uri for s in folder.skills)
    skipped = {s.location.rsplit("/", 1)[-1]: s.reason for s in tree.skipped}
    assert skipped == {s.location.rsplit("/", 1)[-1]: s.reason for s in folder.skipped}
    assert "over the SEP-2640 limits" in skipped["big"]


def test_a_blob_is_read_within_its_listed_size_and_hashed_once(tmp_path: Path) -> None:
    work, commit = _repo(tmp_path, {"alpha/SKILL.md": skill_md("alpha", "First"), "alpha/a.md": "same\n"})
    git(work, "mv", "alpha/a.md", "alpha/b.md")
    git(work, "commit", "-q", "-m", "renamed")
    renamed = git(work, "rev-parse", "HEAD")
    digests = DigestCache()
    _source(work, commit, SkillRoot(Path(os.devnull))).scan(digests)
    hashed = digests.hashed
    again = _source(work, renamed, SkillRoot(Path(os.devnull))).scan(digests)
    assert digests.hashed == hashed  # the same blobs under another commit and name: nothing hashed again
    file = next(f for f in again.files if f.uri.endswith("/b.md"))
    assert file.read() == b"same\n"
    source = _source(work, renamed, SkillRoot(Path(os.devnull)))
    entry = next(e for e in source.entries() if e.rel[-1] == "b.md")
    with pytest.raises(GitError, match="the tree said 99"):
        source.objects.read(entry.oid, 99)  # another size than the blob's: refused before its body
    assert source.objects.read(entry.oid, entry.size) == b"same\n"  # and the reader is in step after it


def test_the_listing_stops_at_its_bound(tmp_path: Path) -> None:
    work, commit = _repo(tmp_path, {f"d/f{i}": "x" for i in range(30)})
    with pytest.raises(GitError, match="more than 20 files"):
        list_tree(work / ".git", commit, (), {**os.environ, **GIT_ENV}, "here", max_entries=20)
    assert len(list_tree(work / ".git", commit, ("d",), dict(os.environ), "here", max_entries=30)) == 30
