"""Git roots read from git's object database (catalog/git_tree.py): nothing written but git's objects.

Real repositories, some crafted with git's plumbing the way an attacker who can push would craft them:
a tree naming `d` both as a symlink to a writable folder and as a folder holding a symlink (the old
checkout wrote the second through the first), a 200 MB blob outside any skill (the old checkout read it
whole: 416 MB peak), and a tree bomb (15 objects, 10^8 paths; the old listing captured all of
`git ls-tree -r`). `skillwire serve`, `lint` and the bridge's `--local` are real processes or the real
configuration loader.
"""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from unittest import mock

from support.calls import call, healthz, list_uris, wait_for
from support.cli import run_cli
from support.gitserver import GIT_ENV, WorkRepo, git, skill_md
from support.servers import serve_http

POLL = 0.3
SOURCE = "io.skillwire/source"


def make_repo(tmp_path: Path, name: str = "skills.git") -> WorkRepo:
    return WorkRepo(tmp_path / f"work-{name}", tmp_path / "served" / name)


def _object(repo: Path, kind: str, data: bytes) -> str:
    done = subprocess.run(
        ["git", "hash-object", "-w", "--literally", "-t", kind, "--stdin"],
        cwd=repo,
        input=data,
        capture_output=True,
        env={**os.environ, **GIT_ENV},
        check=True,
    )
    return done.stdout.decode().strip()


def _tree(repo: Path, entries: list[tuple[str, str, str]]) -> str:
    """A tree object of exactly these (mode, name, id) entries, in this order, duplicates and all."""
    data = b"".join(f"{mode} {name}".encode() + b"\0" + bytes.fromhex(oid) for mode, name, oid in entries)
    return _object(repo, "tree", data)


def _commit_tree(repo: WorkRepo, tree: str, message: str) -> str:
    parent = git(repo.work, "rev-parse", "--verify", "-q", "HEAD") if _has_head(repo) else ""
    args = ["commit-tree", tree, "-m", message, *(["-p", parent] if parent else [])]
    commit = git(repo.work, *args)
    git(repo.work, "update-ref", "refs/heads/main", commit)
    return commit


def _has_head(repo: WorkRepo) -> bool:
    found = subprocess.run(["git", "rev-parse", "-q", "--verify", "HEAD"], cwd=repo.work, capture_output=True)
    return found.returncode == 0


def _skill_tree(repo: WorkRepo, name: str, extra: tuple[tuple[str, str, str], ...] = ()) -> str:
    md = _object(repo.work, "blob", skill_md(name, f"The {name} skill").encode())
    return _tree(repo.work, [("100644", "SKILL.md", md), *extra])


def _files(folder: Path) -> dict[str, tuple[int, int]]:
    """Every file under `folder` (symlinks too), by path: (size, mtime_ns)."""
    found: dict[str, tuple[int, int]] = {}
    for path in folder.rglob("*"):
        if path.is_symlink() or path.is_file():
            info = path.lstat()
            found[str(path.relative_to(folder))] = (info.st_size, info.st_mtime_ns)
    return found


def _outside_object_store(before: dict[str, tuple[int, int]], after: dict[str, tuple[int, int]]) -> list[str]:
    """Files made or changed under the cache folder that are not git's own (its bare repository) or one of
    skillwire's fixed-name files (the cache's lock, the digest cache): none of them named by a tree."""
    changed = [path for path, stamp in after.items() if before.get(path) != stamp]
    return sorted(
        path
        for path in changed
        if "repo.git" not in Path(path).parts
        and not (Path(path).parts[:1] == ("git",) and Path(path).name == "lock")
        and path != "digests.sqlite"
    )


def _peak_rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    raise AssertionError("no VmHWM in /proc/PID/status")


def test_a_name_held_twice_writes_nothing_and_serves_neither(tmp_path: Path, own_cache_env: dict[str, str]) -> None:
    """`d` a symlink to a writable folder, and `d` a folder holding a symlink: the old checkout made the
    second entry inside the folder the first one points at."""
    outside = tmp_path / "victim"  # stands for ~/.claude/skills/ of whoever runs serve
    outside.mkdir()
    repo = make_repo(tmp_path)
    link_to_victim = _object(repo.work, "blob", str(outside).encode())
    planted = _object(repo.work, "blob", b"/etc/passwd")
    notes = _object(repo.work, "blob", b"notes\n")
    inner = _tree(repo.work, [("120000", "planted", planted)])
    evil = _skill_tree(repo, "evil", (("120000", "d", link_to_victim), ("40000", "d", inner)))
    good = _skill_tree(repo, "good", (("100644", "notes.md", notes),))
    skills = _tree(repo.work, [("40000", "evil", evil), ("40000", "good", good)])
    commit = _commit_tree(repo, _tree(repo.work, [("40000", "skills", skills)]), "hostile")
    repo.push()
    spec = f"git+file://{repo.bare}@main#skills"
    cache = tmp_path / "cache" / "skillwire"
    with serve_http([spec, "--no-watch"], env=own_cache_env) as running:
        assert list_uris(running.url) == ["skill://evil/SKILL.md", "skill://good/SKILL.md"]
        evil_files = call(running.url, "skills/get", {"uri": "skill://evil/SKILL.md"})["skill"]["resources"]
        assert [r["uri"] for r in evil_files] == ["skill://evil/SKILL.md"]  # neither `d`, nothing below it
        assert list(outside.iterdir()) == []  # nothing planted in the folder the symlink named
        log = running.log()
        assert f"@{commit[:12]}/evil/d: not served: the tree names this path more than once" in log
        assert "evil/d: symlink: never served" in log
    linted = run_cli("lint", spec, env=own_cache_env)
    assert linted.code == 0, linted.err
    assert list(outside.iterdir()) == []  # nothing planted in the folder the symlink named
    assert not [p for p in cache.rglob("*") if p.is_symlink()]  # and no symlink made anywhere in the cache


def test_a_200_mb_blob_outside_every_skill_is_never_read(tmp_path: Path, own_cache_env: dict[str, str]) -> None:
    tiny = make_repo(tmp_path, "tiny.git")
    tiny.write("skills/alpha/SKILL.md", skill_md("alpha", "Small"))
    tiny.commit("tiny")
    tiny.push()
    big = make_repo(tmp_path, "big.git")
    big.write("skills/alpha/SKILL.md", skill_md("alpha", "Small"))
    big.commit("skills")
    # 200 MB of zeros, hashed into the object store from a stream (never in this process's memory): the
    # pack holds it in about 200 KB, as the review's 191 KiB pack held its 192 MiB blob.
    with subprocess.Popen(["head", "-c", str(200 * 1024 * 1024), "/dev/zero"], stdout=subprocess.PIPE) as zeros:
        oid = (
            subprocess.run(
                ["git", "hash-object", "-w", "--stdin"],
                cwd=big.work,
                stdin=zeros.stdout,
                capture_output=True,
                check=True,
            )
            .stdout.decode()
            .strip()
        )
    git(big.work, "update-index", "--add", "--cacheinfo", f"100644,{oid},data/big.bin")
    git(big.work, "commit", "-q", "-m", "a big file outside the skills")
    big.push()
    peaks = {}
    for name, repo in (("tiny", tiny), ("big", big)):
        with serve_http([f"git+file://{repo.bare}@main", "--no-watch"], env=own_cache_env) as running:
            assert list_uris(running.url) == ["skill://skills/alpha/SKILL.md"]
            peaks[name] = _peak_rss_kib(running.process.pid)
    assert peaks["big"] - peaks["tiny"] < 64 * 1024, peaks


def _bomb(repo: WorkRepo) -> str:
    """A tree of 10^8 paths in 10 tree objects and one blob (each level names the one below ten times)."""
    blob = _object(repo.work, "blob", b"x\n")
    level = _tree(repo.work, [("100644", str(i), blob) for i in range(10)])
    for _ in range(7):
        level = _tree(repo.work, [("40000", str(i), level) for i in range(10)])
    return level


def test_a_tree_bomb_is_refused_and_the_previous_commit_stays_served(
    tmp_path: Path, own_cache_env: dict[str, str]
) -> None:
    repo = make_repo(tmp_path)
    repo.write("skills/alpha/SKILL.md", skill_md("alpha", "Before the bomb"))
    good = repo.commit("good")
    repo.push()
    with serve_http([f"git+file://{repo.bare}@main", "--poll", str(POLL)], env=own_cache_env) as running:
        assert list_uris(running.url) == ["skill://skills/alpha/SKILL.md"]
        before = _peak_rss_kib(running.process.pid)
        top = _entries(repo, git(repo.work, "write-tree"))
        with_bomb = _tree(repo.work, sorted([("40000", "bomb", _bomb(repo)), *top], key=lambda e: e[1]))
        pushed_at = time.monotonic()
        bomb = _commit_tree(repo, with_bomb, "a tree bomb")
        repo.push()
        wait_for(lambda: "names more than 200,000 files" in running.log(), 60, "the tree bomb refused")
        assert time.monotonic() - pushed_at < 60
        refused = [line for line in running.log().splitlines() if "names more than" in line]
        assert len(refused[0].splitlines()) == 1
        assert f"still serving commit {good[:12]}" in refused[0]
        assert _peak_rss_kib(running.process.pid) - before < 96 * 1024
        entry = call(running.url, "skills/list")["skills"][0]
        assert entry["_meta"][SOURCE]["commit"] == good
        report = healthz(running.url)
        assert report["index"] == good
        assert report["stale"] is True
        assert "200,000" in report["lastError"]
        assert bomb not in str(report)


def _entries(repo: WorkRepo, tree: str) -> list[tuple[str, str, str]]:
    found = []
    for line in git(repo.work, "ls-tree", tree).splitlines():
        meta, _, name = line.partition("\t")
        mode, kind, oid = meta.split(" ")
        found.append(("40000" if kind == "tree" else mode, name, oid))
    return found


def test_serve_lint_and_the_bridge_write_nothing_outside_the_object_store(
    tmp_path: Path, own_cache_env: dict[str, str]
) -> None:
    repo = make_repo(tmp_path)
    repo.write("skills/alpha/SKILL.md", skill_md("alpha", "First"))
    repo.write("skills/alpha/references/notes.md", "notes\n")
    repo.write("skills/beta/SKILL.md", skill_md("beta", "Second"))
    repo.commit("skills")
    repo.push()
    spec = f"git+file://{repo.bare}@main#skills"
    cache = tmp_path / "cache" / "skillwire"
    cache.mkdir(parents=True)
    steps: dict[str, Callable[[], object]] = {
        "serve": lambda: _serve_once(spec, own_cache_env),
        "lint": lambda: run_cli("lint", spec, env=own_cache_env),
        "bridge": lambda: _bridge_local(spec, own_cache_env),
    }
    for name, step in steps.items():
        before = _files(cache)
        step()
        assert _outside_object_store(before, _files(cache)) == [], name
    assert not [p for p in cache.rglob("*") if "SKILL.md" in p.name or p.name == "notes.md"]


def _serve_once(spec: str, env: dict[str, str]) -> None:
    with serve_http([spec, "--no-watch"], env=env) as running:
        assert list_uris(running.url) == ["skill://alpha/SKILL.md", "skill://beta/SKILL.md"]
        read = call(running.url, "resources/read", {"uri": "skill://alpha/references/notes.md"})
        assert read["contents"][0]["text"] == "notes\n"


def _bridge_local(spec: str, env: dict[str, str]) -> None:
    from skillwire.bridge.config import CommandLineUpstreams, load_config

    with mock.patch.dict(os.environ, env):
        config = load_config(CommandLineUpstreams(local=[spec]))
    (local,) = config.local
    assert local.paths == ()
    (tree,) = local.trees
    assert tree.objects.read(tree.entries()[0].oid, tree.entries()[0].size)
