"""The catalog watcher wakes for changes, never for reads (issue 25), over `skillwire serve` on HTTP.

watchfiles armed `IN_OPEN` on every watched folder, so every open of a served file, by the server's own
`resources/read` or by any other process, woke its thread. Here the served files are read many times
over, through the server and straight from disk by this process, and the watcher must not be handed a
single event (`skillwire_watch_events_total` counts what the kernel delivers) nor reload; then a
modified, created, deleted and renamed file, a new sub-folder, a new skill and a skill folder moved
must each reach `skills/get` / `skills/list`, and the counter moves.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from support import inotify
from support.calls import wait_for
from support.rawhttp import RawSession
from support.servers import serve_http

pytestmark = pytest.mark.skipif(not inotify.available(), reason="the inotify watcher is Linux's")

SKILL_MD = "---\nname: {name}\ndescription: The {name} skill, for the watcher test.\n---\n\n# {name}\n"


def make_skill(root: Path, name: str) -> None:
    (root / name / "references").mkdir(parents=True)
    (root / name / "scripts").mkdir()
    (root / name / "SKILL.md").write_text(SKILL_MD.format(name=name))
    for index in range(4):
        (root / name / "references" / f"ref-{index}.md").write_text(f"{name} reference {index}\n" * 40)
    (root / name / "scripts" / "run.sh").write_text("#!/bin/sh\necho run\n")


def scrape(base: str, prefix: str) -> float:
    """The sum of every sample of `prefix` on /metrics."""
    import urllib.request

    with urllib.request.urlopen(base + "/metrics", timeout=10) as response:
        text = response.read().decode()
    return sum(float(line.rsplit(" ", 1)[1]) for line in text.splitlines() if line.startswith(prefix))


def files_of(session: RawSession, skill: str) -> dict[str, str]:
    """uri -> digest of every file `skills/get` lists for `skill` ({} when it is not served)."""
    answer = session.call("skills/get", {"uri": f"skill://{skill}/SKILL.md"})
    if "error" in answer:
        return {}
    return {str(f["uri"]): str(f["digest"]) for f in answer["result"]["skill"]["resources"]}


def listed(session: RawSession) -> set[str]:
    found: set[str] = set()
    cursor: str | None = None
    while True:
        result = session.call("skills/list", {"cursor": cursor} if cursor else {})["result"]
        found |= {str(skill["uri"]) for skill in result["skills"]}
        cursor = result.get("nextCursor")
        if not cursor:
            return found


def test_reads_wake_nothing_and_every_change_is_seen(tmp_path: Path) -> None:
    root = tmp_path / "skills"
    for name in ("alpha", "beta"):
        make_skill(root, name)
    served = sorted(path for path in root.rglob("*") if path.is_file())
    with serve_http([str(root), "--no-digest-cache"]) as server:
        base = server.url.removesuffix("/mcp")
        session = RawSession(server.url)
        # Armed: a change is seen (a cold start arms right after its scan).
        (root / "alpha" / "references" / "armed.md").write_text("armed\n")
        wait_for(lambda: "skill://alpha/references/armed.md" in files_of(session, "alpha"), 30, "the first change")
        time.sleep(0.5)  # past the batch's debounce, so its events are all counted
        events, reloads = scrape(base, "skillwire_watch_events_total"), scrape(base, "skillwire_reloads_total")
        assert scrape(base, 'skillwire_watch_events_total{backend="inotify"}') == events > 0

        uris = [uri for uri in files_of(session, "alpha") | files_of(session, "beta")]
        for _ in range(10):
            for uri in uris:
                assert "result" in session.call("resources/read", {"uri": uri}), uri
        for _ in range(50):
            for path in served:
                with open(path, "rb") as handle:
                    handle.read()
            for folder in (root, root / "alpha", root / "alpha" / "references", root / "beta" / "scripts"):
                os.listdir(folder)
        time.sleep(0.5)
        assert scrape(base, "skillwire_watch_events_total") == events  # not one event for 1,100 opens
        assert scrape(base, "skillwire_reloads_total") == reloads

        def seen(what: str, check: Callable[[], bool]) -> None:
            wait_for(check, 30, what)

        alpha, beta = "skill://alpha", "skill://beta"
        before = files_of(session, "alpha")[f"{alpha}/references/ref-0.md"]
        (root / "alpha" / "references" / "ref-0.md").write_text("modified\n")
        seen("a modified file", lambda: files_of(session, "alpha")[f"{alpha}/references/ref-0.md"] != before)
        (root / "beta" / "references" / "created.md").write_text("created\n")
        seen("a created file", lambda: f"{beta}/references/created.md" in files_of(session, "beta"))
        (root / "beta" / "references" / "ref-1.md").unlink()
        seen("a deleted file", lambda: f"{beta}/references/ref-1.md" not in files_of(session, "beta"))
        os.rename(root / "alpha" / "scripts" / "run.sh", root / "alpha" / "scripts" / "go.sh")
        seen(
            "a renamed file",
            lambda: {f"{alpha}/scripts/go.sh"} == {u for u in files_of(session, "alpha") if "/scripts/" in u},
        )
        (root / "alpha" / "assets" / "deep").mkdir(parents=True)
        (root / "alpha" / "assets" / "deep" / "inner.txt").write_text("in a new sub-folder\n")
        seen("a file in a new sub-folder", lambda: f"{alpha}/assets/deep/inner.txt" in files_of(session, "alpha"))
        # A file written into that sub-folder later: its watch came from the folder's IN_CREATE.
        (root / "alpha" / "assets" / "deep" / "later.txt").write_text("later\n")
        seen(
            "a later file in the new sub-folder", lambda: f"{alpha}/assets/deep/later.txt" in files_of(session, "alpha")
        )
        make_skill(root, "gamma")
        seen("a new skill", lambda: "skill://gamma/SKILL.md" in listed(session))
        # A skill folder moved deeper (its name must stay the folder's): watched again under its new path.
        (root / "team").mkdir()
        os.rename(root / "beta", root / "team" / "beta")
        seen("a moved skill folder", lambda: "skill://team/beta/SKILL.md" in listed(session))
        (root / "team" / "beta" / "scripts" / "after-move.sh").write_text("echo moved\n")
        seen(
            "a file in the moved folder",
            lambda: "skill://team/beta/scripts/after-move.sh" in files_of(session, "team/beta"),
        )
        assert "skill://beta/SKILL.md" not in listed(session)
        assert scrape(base, 'skillwire_watch_events_total{backend="inotify"}') > events
