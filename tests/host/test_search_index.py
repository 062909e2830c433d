"""The search index follows the registry row by row, can live in an SQLite file across restarts, and a
query hands back only the rows asked for with a count of the rest (issue 21: first query and later ones)."""

from __future__ import annotations

import gc
import logging
import sqlite3
import threading
from pathlib import Path

import pytest

from skillwire.core.entry import SkillEntry
from skillwire.core.manifest import ManifestFile
from skillwire.host.registry import RegisteredSkill, Registry
from skillwire.host.search import SkillSearch


def entry(name: str, description: str, digest_digit: str = "0") -> SkillEntry:
    uri = f"skill://{name}/SKILL.md"
    return SkillEntry(
        uri, {"name": name, "description": description}, (ManifestFile(uri, "sha256:" + digest_digit * 64, 10),)
    )


class Bodies:
    """A body source that counts its reads, as `SkillHost.indexable_body` would read files."""

    def __init__(self, bodies: dict[str, str]) -> None:
        self.bodies = bodies
        self.reads = 0
        self._lock = threading.Lock()

    def __call__(self, skill: RegisteredSkill) -> str | None:
        with self._lock:
            self.reads += 1
        return self.bodies.get(skill.name)


def catalog(count: int) -> tuple[Registry, Bodies]:
    registry = Registry()
    registry.set_origin(
        "work", "mcp", [entry(f"skill-{i:04d}", f"Helps with topic {i % 7} for team {i}.") for i in range(count)]
    )
    bodies = {
        f"skill-{i:04d}": f"# Purpose\n\nUse it when the {'kiln' if i == 17 else 'oven'} needs a schedule."
        for i in range(count)
    }
    return registry, Bodies(bodies)


def names(found: list[RegisteredSkill]) -> list[str]:
    return [s.name for s in found]


def test_a_change_reindexes_only_the_skills_it_touched() -> None:
    registry, bodies = catalog(300)
    search = SkillSearch(bodies)
    assert names(search.search(registry, "kiln")) == ["skill-0017"]
    assert (search.indexed, bodies.reads) == (300, 300)
    changed = [entry(f"skill-{i:04d}", f"Helps with topic {i % 7} for team {i}.") for i in range(300)]
    changed[5] = entry("skill-0005", "Glazes pottery.")  # one description changed
    changed[6] = entry("skill-0006", "Helps with topic 6 for team 6.", digest_digit="1")  # one SKILL.md changed
    del changed[250]  # one skill left
    registry.set_origin("work", "mcp", changed)
    assert names(search.search(registry, "glazes")) == ["skill-0005"]
    assert (search.indexed, bodies.reads) == (302, 302)
    assert "skill-0250" not in names(search.search(registry, "team"))
    assert len(search.search(registry, "oven")) == 298  # every skill with "oven" in its body, once


def test_a_restart_over_the_same_catalog_reads_no_body_and_ranks_the_same(tmp_path: Path) -> None:
    registry, bodies = catalog(300)
    path = tmp_path / "index" / "search.sqlite"
    first = SkillSearch(bodies, path=path)
    before = [s.ref for s in first.search(registry, "topic 3 schedule")]
    first.close()
    assert path.is_file()
    again = Bodies(bodies.bodies)
    restarted = SkillSearch(again, path=lambda: path)  # a callable is asked at the first query
    assert [s.ref for s in restarted.search(registry, "topic 3 schedule")] == before
    assert names(restarted.search(registry, "kiln")) == ["skill-0017"]
    assert (restarted.indexed, again.reads) == (0, 0)


def test_a_body_read_later_is_indexed_once_and_kept_across_a_restart(tmp_path: Path) -> None:
    registry, bodies = catalog(20)
    known: set[str] = set()

    def body_of(skill: RegisteredSkill) -> str | None:
        return bodies(skill) if skill.name in known else None  # an upstream skill: only once read

    path = tmp_path / "search.sqlite"
    search = SkillSearch(body_of, path=path)
    assert search.search(registry, "kiln") == []
    known.add("skill-0017")
    search.note_body_known("work", "skill://skill-0017/SKILL.md")
    assert names(search.search(registry, "kiln")) == ["skill-0017"]
    assert search.indexed == 21
    search.close()
    known.clear()  # a new process has not read it, but the file holds it, verified by its digest
    restarted = SkillSearch(body_of, path=path)
    assert names(restarted.search(registry, "kiln")) == ["skill-0017"]
    assert restarted.indexed == 0


def test_two_processes_sharing_one_file_each_see_their_own_catalog(tmp_path: Path) -> None:
    path = tmp_path / "search.sqlite"
    ours, theirs = Registry(), Registry()
    ours.set_origin(
        "work", "mcp", [entry("kiln-log", "Firing schedules for a kiln."), entry("notes", "Meeting notes.")]
    )
    theirs.set_origin(
        "work", "mcp", [entry("bakery", "Oven schedules for a bakery."), entry("notes", "Meeting notes.")]
    )
    one = SkillSearch(path=path)
    other = SkillSearch(path=path)  # a second connection: what another process would hold
    for _ in range(2):
        assert names(one.search(ours, "schedules")) == ["kiln-log"]
        assert names(other.search(theirs, "schedules")) == ["bakery"]
        assert names(one.search(ours, "notes")) == ["notes"]


def test_a_corrupt_index_file_costs_an_in_memory_index_and_one_line(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    registry, bodies = catalog(30)
    path = tmp_path / "search.sqlite"
    path.write_bytes(b"this is not an SQLite database" * 200)
    search = SkillSearch(bodies, path=path)
    with caplog.at_level(logging.WARNING, logger="skillwire.host.search"):
        assert names(search.search(registry, "kiln")) == ["skill-0017"]
    assert [r.getMessage().split(" (")[0] for r in caplog.records] == [f"search index {path} cannot be used"]


def test_an_index_file_of_another_format_is_rebuilt(tmp_path: Path) -> None:
    registry, bodies = catalog(20)
    path = tmp_path / "search.sqlite"
    SkillSearch(bodies, path=path).search(registry, "kiln")
    with sqlite3.connect(path) as db:
        db.execute("UPDATE meta SET value = 'skillwire-search-0' WHERE key = 'format'")
        db.execute("DELETE FROM names")  # what an old format might hold: rows of another meaning
    rebuilt = SkillSearch(bodies, path=path)
    assert names(rebuilt.search(registry, "kiln")) == ["skill-0017"]
    assert rebuilt.indexed == 20


@pytest.mark.parametrize("query", ["oven", "topic schedule", "schedule for the oven of team topic 3 please"])
def test_a_bounded_query_is_the_head_of_the_full_ranking_with_its_count(query: str) -> None:
    registry, bodies = catalog(400)
    search = SkillSearch(bodies)
    everything = search.search(registry, query)
    for limit in (1, 10, 50, 120):
        head = search.ranked(registry, query, limit=limit)
        assert head.total == len(everything)
        assert [s.ref for s in head.skills] == [s.ref for s in everything[:limit]]


class GatedBodies(Bodies):
    """Counts reads per thread; reads off the main thread wait for `gate` (to stop a worker mid-way)."""

    def __init__(self, bodies: dict[str, str]) -> None:
        super().__init__(bodies)
        self.main_thread_reads = 0
        self.gate = threading.Event()
        self.gate.set()
        self.worker_reading = threading.Event()  # a read off the main thread has begun

    def __call__(self, skill: RegisteredSkill) -> str | None:
        if threading.current_thread() is threading.main_thread():
            self.main_thread_reads += 1
        else:
            self.worker_reading.set()
            assert self.gate.wait(60)
        return super().__call__(skill)


QUERIES = ["kiln", "oven schedule", "topic 3 team", "purpose", "glaze", "skill-0042", "helps"]


def test_a_large_new_index_answers_before_reading_any_body_then_ranks_as_a_synchronous_build() -> None:
    registry, plain = catalog(300)
    bodies = GatedBodies(plain.bodies)
    search = SkillSearch(bodies, bodies_at_once=100)  # 300 new rows > 100: bodies in the background
    bodies.gate.clear()  # the pass stays before its first body until the answer is checked
    answered = search.ranked(registry, "helps topic")
    assert answered.skills  # answered from names and descriptions
    assert answered.bodies_pending == 300  # and it says that no body is in its ranking yet
    assert bodies.main_thread_reads == 0
    bodies.gate.set()
    assert search.wait_for_bodies(timeout=60)
    assert search.bodies_indexed == 300
    assert search.ranked(registry, "helps topic").bodies_pending == 0
    synchronous = SkillSearch(Bodies(plain.bodies))  # 300 < BODIES_AT_ONCE: every body before answering
    for query in QUERIES:
        got, expected = search.ranked(registry, query), synchronous.ranked(registry, query)
        assert (names(got.skills), got.total) == (names(expected.skills), expected.total), query
    assert names(search.search(registry, "kiln")) == ["skill-0017"]


def test_a_restart_finishes_the_bodies_a_stopped_process_left_pending(tmp_path: Path) -> None:
    registry, plain = catalog(300)
    plain.bodies["skill-0299"] = "# Purpose\n\nUse it to glaze pottery."  # the last rowid: indexed last
    bodies = GatedBodies(plain.bodies)
    path = tmp_path / "search.sqlite"
    first = SkillSearch(bodies, path=path, bodies_at_once=100)
    bodies.gate.clear()  # the worker's first read waits
    first.search(registry, "helps")
    assert bodies.worker_reading.wait(60)  # the worker holds its first batch
    closing = threading.Thread(target=first.close)
    closing.start()
    while not first.index._stopping:  # close() has asked the worker to stop after its batch
        threading.Event().wait(0.01)
    bodies.gate.set()
    closing.join(60)
    assert first.bodies_indexed == 250  # one batch (_BODY_BATCH) done, 50 rows left pending in the file
    restarted = SkillSearch(bodies, path=path, bodies_at_once=100)
    bodies.gate.clear()
    assert restarted.ranked(registry, "glaze").bodies_pending == 50  # answered before the rest of the pass
    bodies.gate.set()
    assert restarted.wait_for_bodies(timeout=60)
    assert (restarted.indexed, restarted.bodies_indexed) == (0, 50)  # nothing re-made, only the rest finished
    assert names(restarted.search(registry, "glaze")) == ["skill-0299"]
    synchronous = SkillSearch(Bodies(plain.bodies))
    for query in QUERIES:
        got, expected = restarted.ranked(registry, query), synchronous.ranked(registry, query)
        assert (names(got.skills), got.total) == (names(expected.skills), expected.total), query
    restarted.close()


@pytest.mark.parametrize("enabled", [True, False])
def test_a_query_pauses_the_cyclic_collector_and_leaves_it_as_it_found_it(enabled: bool) -> None:
    registry, plain = catalog(30)
    seen: list[bool] = []
    failing = False

    def body_of(skill: RegisteredSkill) -> str | None:
        seen.append(gc.isenabled())  # read during the query's sync
        if failing:
            raise RuntimeError("a body source that fails mid-sync")
        return plain(skill)

    search = SkillSearch(body_of)
    was = gc.isenabled()
    try:
        gc.enable() if enabled else gc.disable()
        assert names(search.search(registry, "kiln")) == ["skill-0017"]
        assert gc.isenabled() is enabled
        assert len(seen) == 30
        assert not any(seen)
        registry.set_origin("work", "mcp", [entry("broken", "Fails mid-sync.")])
        failing = True
        with pytest.raises(RuntimeError):
            search.search(registry, "broken")
        assert gc.isenabled() is enabled  # back as it was after a failed query too
    finally:
        gc.enable() if was else gc.disable()
