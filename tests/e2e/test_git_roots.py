"""`skillwire serve git+…`: real repositories made with git, served over smart HTTP by `git http-backend` on
127.0.0.1 (tests/support/gitserver.py) and read with `git+file://`; `skillwire serve` a real subprocess.

Served at a tag (only that commit's skills, each entry naming the commit; a symlink leaving the tree,
a submodule and an LFS pointer left out and said); a branch followed while commits are pushed (each page
wholly one commit's catalog, a walk across swaps never sees a skill twice); an outage keeps the last good
commit (log and /healthz) and recovers; a force-push is followed; a pinned commit never moves; an unknown
ref or repository is one line and exit 2; the conformance scenarios pass against a git root;
`--require-signed-commit` serves an SSH-signed commit by a trusted key and refuses an unsigned one or one
signed by another key. `pull` with the commit in skills.lock is tests/e2e/test_git_pull.py; the
list-changed notifications of a followed branch, tests/e2e/test_git_list_changed.py.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from prometheus_client.parser import text_string_to_metric_families

from servers import free_port
from support.calls import call, healthz, list_uris, wait_for
from support.cli import run_cli
from support.conformance import SUCCESS, missing_tools_reason, run_server_scenario
from support.gitserver import GitHTTPServer, WorkRepo, git, skill_md
from support.servers import EXAMPLES, serve_http

POLL = 0.3
SOURCE = "io.skillwire/source"


def make_repo(tmp_path: Path, name: str = "skills.git") -> WorkRepo:
    return WorkRepo(tmp_path / f"work-{name}", tmp_path / "served" / name)


def entries(url: str) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    cursor = None
    while True:
        page = call(url, "skills/list", {"cursor": cursor} if cursor else None)
        found += page["skills"]
        cursor = page.get("nextCursor")
        if not cursor:
            return found


def commit_of(entry: dict[str, Any]) -> str:
    meta = entry["_meta"]
    assert isinstance(meta, dict)
    return str(meta[SOURCE]["commit"])


def test_serve_at_a_tag_serves_that_commit_and_says_what_it_left_out(
    tmp_path: Path, git_server: GitHTTPServer, own_cache_env: dict[str, str]
) -> None:
    # A submodule: another repository, added as a gitlink.
    inner = make_repo(tmp_path, "inner.git")
    inner.write("x/SKILL.md", skill_md("x", "Inside the submodule"))
    inner.commit("inner")
    inner.push()
    repo = make_repo(tmp_path)
    repo.write("skills/alpha/SKILL.md", skill_md("alpha", "First"))
    repo.write("skills/alpha/notes.md", "alpha notes v1\n")
    repo.write("skills/beta/SKILL.md", skill_md("beta", "Second"))
    repo.write("skills/beta/model.bin", "version https://git-lfs.github.com/spec/v1\noid sha256:ab\nsize 99\n")
    repo.write("elsewhere/gamma/SKILL.md", skill_md("gamma", "Outside SUBDIR"))
    os.symlink("/etc/passwd", repo.work / "skills" / "alpha" / "leak")
    git(repo.work, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(inner.bare), "skills/vendored")
    tagged = repo.commit("v1")
    git(repo.work, "tag", "-a", "v1", "-m", "release 1")
    repo.write("skills/delta/SKILL.md", skill_md("delta", "Added after the tag"))
    repo.commit("after v1")
    repo.push("--follow-tags")

    spec = f"git+{git_server.url('skills.git')}@v1#skills=acme"
    with serve_http([spec, "--poll", str(POLL)], env=own_cache_env) as running:
        listed = entries(running.url)
        assert sorted(e["uri"] for e in listed) == ["skill://acme/alpha/SKILL.md", "skill://acme/beta/SKILL.md"]
        assert {commit_of(e) for e in listed} == {tagged}
        source = listed[0]["_meta"][SOURCE]
        repository = git_server.url("skills.git")
        assert source == {"repository": repository, "commit": tagged, "ref": "v1", "path": "skills/alpha"}
        alpha = call(running.url, "skills/get", {"uri": "skill://acme/alpha/SKILL.md"})
        assert sorted(r["uri"] for r in alpha["skill"]["resources"]) == [
            "skill://acme/alpha/SKILL.md",
            "skill://acme/alpha/notes.md",
        ]
        read = call(running.url, "resources/read", {"uri": "skill://acme/alpha/notes.md"})
        assert read["contents"][0]["text"] == "alpha notes v1\n"
        log = running.log()
        assert "alpha/leak: symlink: never served from a git root" in log
        assert "vendored: submodule: not fetched" in log
        assert "model.bin: Git LFS pointer" in log
        report = healthz(running.url)
        assert report["index"] == tagged
        assert report["stale"] is False
        time.sleep(4 * POLL)
        assert {commit_of(e) for e in entries(running.url)} == {tagged}  # a tag never moves
    # No working tree: the cache holds the bare repository and its lock, nothing named by the tree.
    cache = tmp_path / "cache" / "skillwire" / "git"
    outside = [p for p in cache.rglob("*") if p.is_file() and "repo.git" not in p.relative_to(cache).parts]
    assert [p.name for p in outside] == ["lock"]


def test_ls_json_and_get_show_the_commit(tmp_path: Path, own_cache_env: dict[str, str]) -> None:
    repo = make_repo(tmp_path)
    repo.write("hello/SKILL.md", skill_md("hello", "Says hello"))
    commit = repo.commit("one")
    repo.push()
    with serve_http([f"git+file://{repo.bare}@{commit}", "--no-watch"], env=own_cache_env) as running:
        listing = run_cli("ls", "--json", running.url)
        assert listing.code == 0, listing.err
        (skill,) = json.loads(listing.text)["skills"]
        assert skill["source"] == {
            "repository": f"file://{repo.bare}",
            "commit": commit,
            "ref": commit,
            "path": "hello",
            "signedBy": None,
        }
        shown = run_cli("get", "hello", running.url)
        assert f'source (from the server): "file://{repo.bare} @ {commit} (hello)"' in shown.text


def test_following_a_branch_swaps_whole_commits(
    tmp_path: Path, git_server: GitHTTPServer, own_cache_env: dict[str, str]
) -> None:
    repo = make_repo(tmp_path)
    for index in range(6):
        repo.write(f"s{index}/SKILL.md", skill_md(f"s{index}", "generation 0"))
    repo.commit("generation 0")
    repo.push()
    spec = f"git+{git_server.url('skills.git')}@main"
    with serve_http([spec, "--poll", str(POLL), "--page-size", "2"], env=own_cache_env) as running:
        seen_commits: set[str] = set()
        for generation in range(1, 4):
            # Each commit rewrites every description and renames one skill, so a mixed page would show.
            for index in range(6):
                repo.write(f"s{index}/SKILL.md", skill_md(f"s{index}", f"generation {generation}"))
            pushed = repo.commit(f"generation {generation}")
            repo.push()
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline:
                cursor = None
                walked: list[str] = []
                while True:
                    page = call(running.url, "skills/list", {"cursor": cursor} if cursor else None)
                    commits = {commit_of(e) for e in page["skills"]}
                    descriptions = {e["frontmatter"]["description"] for e in page["skills"]}
                    assert len(commits) == 1, page  # wholly one commit's page
                    assert len(descriptions) == 1, page
                    seen_commits |= commits
                    walked += [e["uri"] for e in page["skills"]]
                    cursor = page.get("nextCursor")
                    if not cursor:
                        break
                assert len(walked) == len(set(walked)), walked  # never a skill twice across a swap
                if pushed in commits:
                    break
            else:
                raise AssertionError(f"commit {pushed} was not served within 30 s")
        assert len(seen_commits) >= 3
        assert "now serving commit" in running.log()


def test_a_failed_fetch_keeps_the_last_commit_and_a_force_push_is_followed(
    tmp_path: Path, git_server: GitHTTPServer, own_cache_env: dict[str, str]
) -> None:
    repo = make_repo(tmp_path)
    repo.write("one/SKILL.md", skill_md("one", "First"))
    first = repo.commit("first")
    repo.push()
    spec = f"git+{git_server.url('skills.git')}@main"
    with serve_http([spec, "--poll", str(POLL)], env=own_cache_env) as running:
        assert healthz(running.url)["index"] == first
        git_server.down()
        wait_for(lambda: healthz(running.url)["stale"] is True, 10, "the failed fetch in /healthz")
        report = healthz(running.url)
        assert report["index"] == first
        assert "503" in (report["lastError"] or "")
        assert list_uris(running.url) == ["skill://one/SKILL.md"]  # still serving
        assert "still serving commit " + first[:12] in running.log()
        git_server.down(False)
        wait_for(lambda: healthz(running.url)["stale"] is False, 10, "the recovery")
        # A rewritten history: the old commit is gone from the branch, the new one is served.
        git(repo.work, "reset", "-q", "--hard", first)
        git(repo.work, "rm", "-q", "-r", "one")
        repo.write("two/SKILL.md", skill_md("two", "Rewritten"))
        rewritten = repo.commit("rewritten", "-c", "commit.gpgsign=false")
        git(repo.work, "commit", "-q", "--amend", "-m", "rewritten again")
        rewritten = git(repo.work, "rev-parse", "HEAD")
        repo.push("--force")
        wait_for(lambda: list_uris(running.url) == ["skill://two/SKILL.md"], 15, "the force-pushed commit")
        assert healthz(running.url)["index"] == rewritten


def test_unknown_ref_or_repository_is_one_line_exit_2(
    tmp_path: Path, git_server: GitHTTPServer, own_cache_env: dict[str, str]
) -> None:
    repo = make_repo(tmp_path)
    repo.write("one/SKILL.md", skill_md("one", "First"))
    repo.commit("first")
    repo.push()
    cases = {
        f"git+{git_server.url('skills.git')}@no-such-branch": "has no branch or tag 'no-such-branch'",
        f"git+{git_server.url('missing.git')}": "cannot read",
        f"git+file://{tmp_path}/nothing-here": "cannot read",
        f"git+{git_server.url('skills.git')}@{'0' * 40}": "cannot fetch",
        f"git+{git_server.url('skills.git')}@main#no/such/folder": "no/such/folder",
        f"git+{git_server.url('skills.git')}@-upload-pack=evil": "is not a branch, tag or commit id",
        "git+https://user:secret@example.invalid/repo.git": "a password in the URL",
    }
    for spec, expected in cases.items():
        done = subprocess.run(
            ["skillwire", "serve", spec, "--http", f"127.0.0.1:{free_port()}"],
            capture_output=True,
            text=True,
            env={**os.environ, **own_cache_env},
            timeout=60,
            check=False,
        )
        assert done.returncode == 2, (spec, done.stderr)
        lines = done.stderr.strip().splitlines()
        assert len(lines) == 1, (spec, done.stderr)
        assert expected in lines[0], (spec, done.stderr)
        assert "secret" not in done.stderr


@pytest.mark.conformance
@pytest.mark.parametrize(
    "scenario", ["sep-2640-skills-enumeration", "sep-2640-skills-manifest", "sep-2640-skills-directory"]
)
def test_conformance_scenarios_pass_against_a_git_root(
    tmp_path: Path, git_server: GitHTTPServer, own_cache_env: dict[str, str], scenario: str
) -> None:
    reason = missing_tools_reason()
    if reason:
        pytest.skip(reason)
    repo = make_repo(tmp_path)
    for path in sorted(EXAMPLES.rglob("*")):
        if path.is_file():
            repo.write_bytes("skills/" + path.relative_to(EXAMPLES).as_posix(), path.read_bytes())
    repo.commit("examples")
    repo.push()
    spec = f"git+{git_server.url('skills.git')}@main#skills"
    with serve_http([spec, "--page-size", "2"], env=own_cache_env) as running:
        run = run_server_scenario(running.url, scenario)
    assert run.checks, run.summary()
    assert not run.failures(), run.summary()
    assert not run.warnings(), run.summary()
    assert sum(1 for c in run.checks if c.status == SUCCESS) >= 6, run.summary()


def _ssh_key(tmp_path: Path, name: str) -> Path:
    key = tmp_path / name
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", name, "-f", str(key)], check=True)
    return key


def test_require_signed_commit(tmp_path: Path, git_server: GitHTTPServer, own_cache_env: dict[str, str]) -> None:
    trusted, other = _ssh_key(tmp_path, "trusted"), _ssh_key(tmp_path, "other")
    trust_file = tmp_path / "trust.json"
    added = run_cli("trust", "--file", str(trust_file), "add", "publisher", str(trusted) + ".pub")
    assert added.code == 0, added.err
    repo = make_repo(tmp_path)
    repo.write("one/SKILL.md", skill_md("one", "Signed"))
    sign = ["-c", "gpg.format=ssh", "-c", f"user.signingkey={trusted}", "-c", "commit.gpgsign=true"]
    signed = repo.commit("signed", *sign)
    git(repo.work, "tag", "signed")
    repo.write("one/SKILL.md", skill_md("one", "Unsigned"))
    repo.commit("unsigned", "-c", "commit.gpgsign=false")
    git(repo.work, "tag", "unsigned")
    repo.write("one/SKILL.md", skill_md("one", "Signed by another key"))
    repo.commit("other", "-c", "gpg.format=ssh", "-c", f"user.signingkey={other}", "-c", "commit.gpgsign=true")
    git(repo.work, "tag", "other-key")
    git(repo.work, "push", "-q", "origin", "--tags")
    base = f"git+{git_server.url('skills.git')}"
    flags = ["--require-signed-commit", "--trust-file", str(trust_file), "--no-watch"]
    with serve_http([f"{base}@signed", *flags], env=own_cache_env) as running:
        (entry,) = entries(running.url)
        source = entry["_meta"][SOURCE]
        assert source["commit"] == signed
        assert source["signedBy"].startswith("SHA256:")
    for tag, reason in (("unsigned", "the commit is not signed"), ("other-key", "which is not a trusted key")):
        done = subprocess.run(
            ["skillwire", "serve", f"{base}@{tag}", *flags, "--http", f"127.0.0.1:{free_port()}"],
            capture_output=True,
            text=True,
            env={**os.environ, **own_cache_env},
            timeout=60,
            check=False,
        )
        assert done.returncode == 2, done.stderr
        assert len(done.stderr.strip().splitlines()) == 1, done.stderr
        assert reason in done.stderr, done.stderr
    # Without the flag the unsigned commit is served.
    with serve_http([f"{base}@unsigned", "--no-watch"], env=own_cache_env) as running:
        assert [e["frontmatter"]["description"] for e in entries(running.url)] == ["Unsigned"]


def _small_repo(tmp_path: Path) -> tuple[WorkRepo, str]:
    repo = make_repo(tmp_path)
    repo.write("pack/hello/SKILL.md", skill_md("hello", "Says hello", "Hello."))
    repo.write("pack/hello/ref.md", "reference\n")
    commit = repo.commit("one")
    git(repo.work, "tag", "v1")
    repo.push("--tags")
    return repo, commit


def test_publish_from_a_git_root_records_the_commit_in_the_index(tmp_path: Path, own_cache_env: dict[str, str]) -> None:
    repo, commit = _small_repo(tmp_path)
    store = tmp_path / "store"
    done = run_cli("publish", f"git+file://{repo.bare}@v1#pack=team", f"file://{store}", env=own_cache_env)
    assert done.code == 0, done.err
    assert f"is commit {commit}" in done.err
    (index,) = (store / "indexes").glob("*.jsonl")
    (line,) = index.read_text().splitlines()[1:]
    record = json.loads(line)
    assert record["uri"] == "skill://team/hello/SKILL.md"
    assert record["_meta"][SOURCE] == {
        "repository": f"file://{repo.bare}",
        "commit": commit,
        "ref": "v1",
        "path": "pack/hello",
    }
    with serve_http([f"file://{store}", "--no-watch"], env=own_cache_env) as running:
        (entry,) = entries(running.url)
        assert commit_of(entry) == commit  # a replica of the published catalog still says which commit


def test_sign_and_lint_take_a_git_root(tmp_path: Path, own_cache_env: dict[str, str]) -> None:
    repo, commit = _small_repo(tmp_path)
    key = _ssh_key(tmp_path, "publisher")
    spec = f"git+file://{repo.bare}@v1#pack"
    refused = run_cli("sign", spec, "--key", str(key), env=own_cache_env)
    assert refused.code == 2
    assert "give --out FILE" in refused.err
    out = tmp_path / "signatures.json"
    signed = run_cli("sign", spec, "--key", str(key), "--out", str(out), env=own_cache_env)
    assert signed.code == 0, signed.err
    assert list(json.loads(out.read_text())["signatures"]) == ["skill://hello/SKILL.md"]
    with serve_http([spec, "--signatures", str(out), "--no-watch"], env=own_cache_env) as running:
        (entry,) = entries(running.url)
        assert "io.skillwire/signature" in entry["_meta"]
        assert commit_of(entry) == commit
    linted = run_cli("lint", "--json", spec, env=own_cache_env)
    assert linted.code == 0, linted.err
    assert f"at commit {commit}" in linted.err
    broken = make_repo(tmp_path, "broken.git")
    broken.write("bad/SKILL.md", "---\nname: other-name\ndescription: Wrong folder\n---\n")
    broken.commit("broken")
    broken.push()
    failed = run_cli("lint", "--json", f"git+file://{broken.bare}", env=own_cache_env)
    assert failed.code == 1
    assert any(f["rule"] == "name-mismatch" for f in json.loads(failed.text)), failed.text


def test_lint_of_a_git_subdir_that_is_a_skill_names_it_after_the_subdir(
    tmp_path: Path, own_cache_env: dict[str, str]
) -> None:
    repo = make_repo(tmp_path)
    repo.write("skills/alpha/SKILL.md", skill_md("alpha", "The first skill"))
    repo.commit("alpha")
    repo.push()
    linted = run_cli("lint", "--json", f"git+file://{repo.bare}@main#skills/alpha", env=own_cache_env)
    findings = json.loads(linted.text)
    # Named after the checkout's folder (the commit), its frontmatter name 'alpha' was a name-mismatch error.
    assert [f["rule"] for f in findings] == ["skill-at-root"], findings
    assert "linted as 'alpha'" in findings[0]["message"]
    assert linted.code == 0, linted.err


def test_the_bridge_local_upstream_takes_a_git_root(tmp_path: Path, own_cache_env: dict[str, str]) -> None:
    from unittest import mock

    from skillwire.bridge.config import CommandLineUpstreams, load_config
    from skillwire.catalog.digests import DigestCache
    from skillwire.catalog.snapshot import CatalogFile
    from skillwire.core.errors import BridgeConfigError

    repo, commit = _small_repo(tmp_path)
    with mock.patch.dict(os.environ, own_cache_env):
        config = load_config(CommandLineUpstreams(local=[f"git+file://{repo.bare}@v1#pack"]))
        (local,) = config.local
        assert local.paths == ()  # no folder: the tree is read from git's objects
        (tree,) = local.trees
        assert tree.commit == commit
        (skill,) = tree.scan(DigestCache()).skills
        skill_md = next(f for f in skill.entry.files if f.uri.endswith("/SKILL.md"))
        assert isinstance(skill_md, CatalogFile)
        assert skill_md.read().startswith(b"---\nname: hello")
        with pytest.raises(BridgeConfigError, match="has no branch or tag 'nope'"):
            load_config(CommandLineUpstreams(local=[f"git+file://{repo.bare}@nope"]))


def test_require_signed_commit_in_a_sha256_repository(tmp_path: Path, own_cache_env: dict[str, str]) -> None:
    """Issue 35 defect 4: a SHA-256 repository's commit carries its signature in `gpgsig-sha256`; every one
    was refused as unsigned."""
    trusted = _ssh_key(tmp_path, "trusted")
    trust_file = tmp_path / "trust.json"
    assert run_cli("trust", "--file", str(trust_file), "add", "publisher", str(trusted) + ".pub").code == 0
    repo = WorkRepo(tmp_path / "work", tmp_path / "served" / "skills.git", object_format="sha256")
    repo.write("one/SKILL.md", skill_md("one", "Signed in a SHA-256 repository"))
    signed = repo.commit(
        "signed", "-c", "gpg.format=ssh", "-c", f"user.signingkey={trusted}", "-c", "commit.gpgsign=true"
    )
    assert len(signed) == 64
    repo.push()
    flags = ["--require-signed-commit", "--trust-file", str(trust_file), "--no-watch"]
    with serve_http([f"git+file://{repo.bare}@main", *flags], env=own_cache_env) as running:
        (entry,) = entries(running.url)
        assert entry["_meta"][SOURCE]["commit"] == signed
        assert entry["_meta"][SOURCE]["signedBy"].startswith("SHA256:")


def test_poll_given_by_name_polls_with_no_watch(tmp_path: Path, own_cache_env: dict[str, str]) -> None:
    """Issue 35 defect 12: `--no-watch` is about folders; `--poll N` asked for by name follows the branch."""
    repo = make_repo(tmp_path)
    repo.write("skills/alpha/SKILL.md", skill_md("alpha", "First"))
    repo.commit("one")
    repo.push()
    with serve_http(
        [f"git+file://{repo.bare}@main#skills", "--poll", str(POLL), "--no-watch"], env=own_cache_env
    ) as running:
        assert list_uris(running.url) == ["skill://alpha/SKILL.md"]
        repo.write("skills/beta/SKILL.md", skill_md("beta", "Second"))
        second = repo.commit("two")
        repo.push()
        wait_for(lambda: {commit_of(e) for e in entries(running.url)} == {second}, 30, "the pushed commit served")
        assert list_uris(running.url) == ["skill://alpha/SKILL.md", "skill://beta/SKILL.md"]


def _checked_gauge(url: str) -> float:
    with urllib.request.urlopen(url.removesuffix("/mcp") + "/metrics", timeout=10) as response:
        text = response.read().decode()
    for family in text_string_to_metric_families(text):
        if family.name == "skillwire_index_checked_timestamp_seconds":
            return float(family.samples[0].value)
    raise AssertionError("no skillwire_index_checked_timestamp_seconds on /metrics")


@pytest.mark.parametrize("ref", ["main", "v1"])
def test_every_poll_moves_the_checked_gauge(tmp_path: Path, own_cache_env: dict[str, str], ref: str) -> None:
    """Issue 37 broken item 2: under --poll the gauge the README's SkillwireStaleIndex alert reads stayed at
    load time while /healthz said "checked 0.4 s ago"; a followed branch and a pinned tag alike."""
    repo = make_repo(tmp_path)
    repo.write("skills/alpha/SKILL.md", skill_md("alpha", "First"))
    repo.commit("one")
    git(repo.work, "tag", "v1")
    repo.push("--tags")
    with serve_http([f"git+file://{repo.bare}@{ref}#skills", "--poll", str(POLL)], env=own_cache_env) as running:
        assert list_uris(running.url) == ["skill://alpha/SKILL.md"]
        first = _checked_gauge(running.url)
        time.sleep(2.5)  # several polls, and the metrics flush (one second)
        later = _checked_gauge(running.url)
        report = healthz(running.url)
        assert later > first + 1.0, (first, later)
        assert abs((time.time() - later) - report["checkedSecondsAgo"]) < 2.0, (later, report)


def test_each_likely_git_mistake_names_its_fix(tmp_path: Path, own_cache_env: dict[str, str]) -> None:
    """Issue 37 friction: a short commit id, a bare repository given as a folder, and as a `file://` store,
    each answered in one line that names the fix (the full id; `git+file://…`)."""
    repo = make_repo(tmp_path)
    repo.write("skills/alpha/SKILL.md", skill_md("alpha", "First"))
    commit = repo.commit("one")
    repo.push()
    bare = repo.bare.resolve()
    cases = {  # what is said, and the exit code (2: a command-line mistake; 1: a store that cannot be served)
        f"git+file://{bare}@{commit[:7]}": (
            f"{commit[:7]!r} looks like an abbreviated commit id: give the full one",
            2,
        ),
        str(bare): (f"is a bare git repository, not a folder of skills: serve git+file://{bare}", 2),
        f"file://{bare}": (f"nothing was published there yet; it is a git repository: serve git+file://{bare}", 1),
    }
    for spec, (expected, code) in cases.items():
        done = run_cli("serve", spec, "--http", f"127.0.0.1:{free_port()}", env=own_cache_env)
        assert done.code == code, (spec, done.err)
        lines = done.err.strip().splitlines()
        assert len(lines) == 1, (spec, done.err)
        assert expected in lines[0], (spec, done.err)
        assert "--allow-empty" not in done.err


def test_a_followed_branch_never_goes_back_to_an_older_signed_commit(
    tmp_path: Path, git_server: GitHTTPServer, own_cache_env: dict[str, str]
) -> None:
    """Issue 35 defect 3: with --require-signed-commit, a force-push back to an older signed commit (a
    replay) was served again. Refused in one line while the newer commit stays served, after a restart
    too; `--accept-older-commit` takes it on purpose. Moving forward (several commits at once) still works."""
    trusted = _ssh_key(tmp_path, "trusted")
    trust_file = tmp_path / "trust.json"
    assert run_cli("trust", "--file", str(trust_file), "add", "publisher", str(trusted) + ".pub").code == 0
    sign = ["-c", "gpg.format=ssh", "-c", f"user.signingkey={trusted}", "-c", "commit.gpgsign=true"]
    repo = make_repo(tmp_path)
    repo.write("one/SKILL.md", skill_md("one", "Old and vulnerable"))
    old = repo.commit("old", *sign)
    repo.write("one/SKILL.md", skill_md("one", "Fixed"))
    repo.commit("fixed", *sign)
    repo.push()
    spec = f"git+{git_server.url('skills.git')}@main"
    flags = ["--require-signed-commit", "--trust-file", str(trust_file), "--poll", str(POLL)]
    with serve_http([spec, *flags], env=own_cache_env) as running:
        repo.write("one/SKILL.md", skill_md("one", "Fixed again"))
        repo.commit("two commits ahead", *sign)
        repo.write("one/SKILL.md", skill_md("one", "Newest"))
        newest = repo.commit("newest", *sign)
        repo.push()
        wait_for(lambda: healthz(running.url)["index"] == newest, 30, "moving forward two commits at once")
        git(repo.work, "push", "-q", "--force", "origin", f"{old}:refs/heads/main")  # the replay
        wait_for(lambda: "does not descend from commit" in running.log(), 30, "the replay refused")
        time.sleep(4 * POLL)
        refused = [line for line in running.log().splitlines() if "does not descend" in line]
        assert len(refused) == 1, refused  # said once, not at every poll
        assert f"commit {old[:12]} does not descend from commit {newest[:12]}" in refused[0]
        assert "--accept-older-commit" in refused[0]
        assert healthz(running.url)["index"] == newest
        assert [e["frontmatter"]["description"] for e in entries(running.url)] == ["Newest"]
    # A restart remembers: the branch still names the old commit, the newest is served again.
    with serve_http([spec, *flags], env=own_cache_env) as running:
        assert healthz(running.url)["index"] == newest
        assert f"commit {old[:12]} does not descend from commit {newest[:12]}" in running.log()
    with serve_http([spec, *flags, "--accept-older-commit"], env=own_cache_env) as running:
        assert healthz(running.url)["index"] == old
        assert [e["frontmatter"]["description"] for e in entries(running.url)] == ["Old and vulnerable"]
