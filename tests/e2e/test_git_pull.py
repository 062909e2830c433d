"""`skillwire pull` from `skillwire serve git+…`: the commit each skill came from, in `skills.lock`.

A real repository made with git, served over smart HTTP by `git http-backend` on 127.0.0.1
(tests/support/gitserver.py), followed by a real `skillwire serve --poll`; `pull` and `pull --check` run
as the command line runs them. Pulling twice from one commit writes the same bytes; a commit that changes
one skill changes that skill's lines of the lock and no other (an untouched skill keeps the commit it was
locked at, which still holds exactly its files); `pull --check` says which commit the server moved to; a
folder source writes no `source` at all, as before git roots existed.
"""

from __future__ import annotations

import difflib
import json
from pathlib import Path
from typing import Any

from support.calls import healthz, wait_for
from support.cli import run_cli
from support.gitserver import GitHTTPServer, WorkRepo, git, skill_md
from support.servers import serve_http

POLL = 0.3
LOCK = "skills.lock"


def make_repo(tmp_path: Path, object_format: str = "sha1") -> WorkRepo:
    repo = WorkRepo(tmp_path / "work", tmp_path / "served" / "skills.git", object_format)
    repo.write("README.md", "not a skill\n")
    repo.write("skills/alpha/SKILL.md", skill_md("alpha", "First", "Alpha v1."))
    repo.write("skills/alpha/notes.md", "alpha notes v1\n")
    repo.write("skills/beta/SKILL.md", skill_md("beta", "Second", "Beta."))
    repo.write("skills/team/gamma/SKILL.md", skill_md("gamma", "Third, nested", "Gamma."))
    return repo


def pull(url: str, out: Path, *extra: str) -> str:
    done = run_cli("pull", "-q", *extra, "--to", str(out), url)
    assert done.code == 0, done.err
    return done.err


def lock_of(out: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((out / LOCK).read_text())
    return data


def sources(out: Path) -> dict[str, dict[str, Any] | None]:
    return {skill["name"]: skill.get("source") for skill in lock_of(out)["skills"]}


def skill_blocks(text: str) -> dict[int, str]:
    """Line number (0-based) -> the name of the skill whose block in the lock holds it."""
    owner: dict[int, str] = {}
    data = json.loads(text)
    lines = text.splitlines()
    starts = [i for i, line in enumerate(lines) if line.startswith('      "uri": ')]
    for number, start in enumerate(starts):
        end = starts[number + 1] if number + 1 < len(starts) else len(lines)
        for i in range(start - 1, end - 1):
            owner[i] = data["skills"][number]["name"]
    return owner


def changed_lines(before: str, after: str) -> set[int]:
    """Line numbers of `before` that the change from `before` to `after` replaced or removed."""
    changed: set[int] = set()
    matcher = difflib.SequenceMatcher(a=before.splitlines(), b=after.splitlines(), autojunk=False)
    for tag, i1, i2, _, _ in matcher.get_opcodes():
        if tag != "equal":
            changed |= set(range(i1, max(i2, i1 + 1)))
    return changed


def test_pull_records_each_skills_commit_byte_identically_and_a_new_commit_changes_only_its_skills_lines(
    tmp_path: Path, git_server: GitHTTPServer, own_cache_env: dict[str, str]
) -> None:
    repo = make_repo(tmp_path)
    first = repo.commit("first")
    repo.push()
    repository = git_server.url("skills.git")
    out = tmp_path / "pulled"
    with serve_http([f"git+{repository}@main#skills=acme", "--poll", str(POLL)], env=own_cache_env) as running:
        pull(running.url, out)
        assert sources(out) == {
            "alpha": {"repository": repository, "commit": first, "ref": "main", "path": "skills/alpha"},
            "beta": {"repository": repository, "commit": first, "ref": "main", "path": "skills/beta"},
            "gamma": {"repository": repository, "commit": first, "ref": "main", "path": "skills/team/gamma"},
        }
        for skill in lock_of(out)["skills"]:
            assert list(skill) == ["uri", "name", "path", "source", "files"]
        before = (out / LOCK).read_bytes()
        pull(running.url, out)
        assert (out / LOCK).read_bytes() == before  # the same commit: the same bytes

        # A commit that changes alpha only (and a file outside every skill).
        repo.write("skills/alpha/notes.md", "alpha notes v2\n")
        repo.write("README.md", "still not a skill\n")
        second = repo.commit("second")
        repo.push()
        wait_for(lambda: healthz(running.url)["index"] == second, 30, "the second commit served")

        checked = run_cli("pull", "--check", "--json", "--to", str(out), running.url)
        assert checked.code == 1, checked.err
        report = {s["uri"]: s for s in json.loads(checked.text)["skills"]}
        alpha = report["skill://acme/alpha/SKILL.md"]
        assert alpha["status"] == "changed upstream"
        assert alpha["changed"] == ["notes.md"]
        assert f"the server's commit is now {second} (locked: {first})" in alpha["note"]
        assert report["skill://acme/beta/SKILL.md"]["status"] == "in step"
        assert report["skill://acme/team/gamma/SKILL.md"]["status"] == "in step"

        pull(running.url, out)
        after = (out / LOCK).read_bytes()
        got = sources(out)
        assert got["alpha"] == {"repository": repository, "commit": second, "ref": "main", "path": "skills/alpha"}
        assert got["beta"] is not None
        assert got["beta"]["commit"] == first  # its folder is the same at both commits
        assert got["gamma"] is not None
        assert got["gamma"]["commit"] == first
        owner = skill_blocks(before.decode())
        changed = changed_lines(before.decode(), after.decode())
        assert changed
        assert {owner.get(i) for i in changed} == {"alpha"}, [before.decode().splitlines()[i] for i in changed]
        old_lines = before.decode().splitlines()
        assert any(f'"commit": "{first}"' in old_lines[i] for i in changed)
        assert run_cli("pull", "--check", "--to", str(out), running.url).code == 0

        # A commit that changes nothing a skill holds: the lock stays byte for byte.
        repo.write("README.md", "a third time\n")
        third = repo.commit("third")
        repo.push()
        wait_for(lambda: healthz(running.url)["index"] == third, 30, "the third commit served")
        pull(running.url, out)
        assert (out / LOCK).read_bytes() == after


def test_a_pinned_commit_and_a_tag_are_recorded_and_a_moved_source_is_reported(
    tmp_path: Path, git_server: GitHTTPServer, own_cache_env: dict[str, str]
) -> None:
    repo = make_repo(tmp_path)
    commit = repo.commit("first")
    git(repo.work, "tag", "-a", "v1", "-m", "release 1")
    repo.push("--follow-tags")
    repository = git_server.url("skills.git")
    out = tmp_path / "pinned"
    with serve_http([f"git+{repository}@{commit}#skills/team", "--no-watch"], env=own_cache_env) as running:
        pull(running.url, out)
        assert sources(out) == {
            "gamma": {"repository": repository, "commit": commit, "ref": commit, "path": "skills/team/gamma"}
        }
    # The same skill, the same files, now served at the tag: the source moved, `--check` says so (and the
    # lock, as the server is another, is only compared, never written).
    with serve_http([f"git+{repository}@v1#skills/team", "--no-watch"], env=own_cache_env) as running:
        checked = run_cli("pull", "--check", "--json", "--to", str(out), running.url)
        assert checked.code == 1, checked.err
        (gamma,) = json.loads(checked.text)["skills"]
        assert gamma["status"] == "changed upstream"
        assert (gamma["added"], gamma["removed"], gamma["changed"]) == ([], [], [])
        assert gamma["note"] == (
            f"now served from {repository} @ v1 = {commit} (skills/team/gamma) "
            f"(locked: {repository} @ {commit} (skills/team/gamma))"
        )


def test_a_sha256_repository_is_served_and_its_64_digit_commit_locked(
    tmp_path: Path, git_server: GitHTTPServer, own_cache_env: dict[str, str]
) -> None:
    repo = make_repo(tmp_path, "sha256")
    commit = repo.commit("first")
    assert len(commit) == 64
    repo.push()
    repository = git_server.url("skills.git")
    out = tmp_path / "pulled"
    # Followed (ls-remote first, then the fetch) and pinned (the fetch of a commit id), each into a new cache.
    for ref, cache in (("main", "followed"), (commit, "pinned")):
        env = {**own_cache_env, "XDG_CACHE_HOME": str(tmp_path / cache)}
        with serve_http([f"git+{repository}@{ref}#skills/team", "--no-watch"], env=env) as running:
            assert healthz(running.url)["index"] == commit
            pull(running.url, out / cache)
        assert sources(out / cache) == {
            "gamma": {"repository": repository, "commit": commit, "ref": ref, "path": "skills/team/gamma"}
        }


def test_a_folder_source_writes_no_source_and_the_lock_format_is_unchanged(
    tmp_path: Path, own_cache_env: dict[str, str]
) -> None:
    repo = make_repo(tmp_path)
    repo.commit("first")
    out = tmp_path / "from-folder"
    with serve_http([str(repo.work / "skills"), "--no-watch", "--no-digest-cache"], env=own_cache_env) as running:
        pull(running.url, out)
        text = (out / LOCK).read_text()
        assert '"source"' not in text
        for skill in lock_of(out)["skills"]:
            assert list(skill) == ["uri", "name", "path", "files"]
        before = (out / LOCK).read_bytes()
        assert run_cli("pull", "--check", "--to", str(out), running.url).code == 0
        pull(running.url, out)
        assert (out / LOCK).read_bytes() == before


def test_a_lock_from_a_git_root_is_checked_against_a_folder_copy_of_it(
    tmp_path: Path, own_cache_env: dict[str, str]
) -> None:
    """The same skills served from a plain folder: the files match, the git source is gone, and --check
    says so (a pull would drop the source)."""
    repo = make_repo(tmp_path)
    commit = repo.commit("first")
    out = tmp_path / "pulled"
    with serve_http([f"git+file://{repo.work}@{commit}#skills", "--no-watch"], env=own_cache_env) as running:
        pull(running.url, out)
    with serve_http([str(repo.work / "skills"), "--no-watch", "--no-digest-cache"], env=own_cache_env) as running:
        checked = run_cli("pull", "--check", "--json", "--to", str(out), running.url)
    assert checked.code == 1, checked.err
    notes = {s["uri"]: s["note"] for s in json.loads(checked.text)["skills"]}
    assert notes["skill://beta/SKILL.md"].startswith(
        f"no longer served from a git repository; locked from file://{repo.work} @ {commit} (skills/beta)"
    )
