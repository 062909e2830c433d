"""`catalog/watcher.py` in process: inotify's batches (reads queue nothing, a lost queue is a full rescan
after fresh watches), watchfiles' fallback batches alike, and `stop_event` ends both."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from pathlib import Path

import anyio
import pytest

from skillwire.catalog import watcher
from skillwire.catalog.watcher import watching
from support import inotify

pytestmark = pytest.mark.anyio
linux_only = pytest.mark.skipif(not inotify.available(), reason="the inotify watcher is Linux's")


class Collected:
    """Every batch a watcher yields, gathered by a task of its own (cancelling a wait for the next batch
    would end the generator), until `stop` is set."""

    def __init__(self, batches: AsyncIterator[list[str] | None]) -> None:
        self.batches = batches
        self.seen: list[list[str] | None] = []
        self.ended = anyio.Event()

    async def run(self) -> None:
        async for batch in self.batches:
            self.seen.append(batch)
        self.ended.set()

    async def wait(self, count: int, seconds: float = 10) -> list[list[str] | None]:
        with anyio.fail_after(seconds):
            while len(self.seen) < count:
                await anyio.sleep(0.02)
        return self.seen


@linux_only
async def test_reads_queue_nothing_and_changes_are_batched(tmp_path: Path) -> None:
    (tmp_path / "a" / "refs").mkdir(parents=True)
    notes = tmp_path / "a" / "refs" / "notes.md"
    notes.write_text("notes\n")
    stop = anyio.Event()
    async with (
        watching([str(tmp_path)], debounce_ms=100, stop_event=stop) as batches,
        anyio.create_task_group() as group,
    ):
        collected = Collected(batches)
        group.start_soon(collected.run)
        for _ in range(500):
            notes.read_bytes()
            os.listdir(tmp_path / "a")
        await anyio.sleep(0.5)
        assert collected.seen == []
        notes.write_text("edited\n")
        (tmp_path / "a" / "refs" / "new.md").write_text("new\n")
        (tmp_path / "a" / "refs" / "__pycache__").mkdir()  # dropped, as watchfiles' DefaultFilter drops it
        assert await collected.wait(1) == [[str(notes), str(tmp_path / "a" / "refs" / "new.md")]]
        stop.set()
        with anyio.fail_after(5):
            await collected.ended.wait()


@linux_only
async def test_a_lost_queue_is_a_full_rescan_with_fresh_watches(tmp_path: Path) -> None:
    limit = int(Path("/proc/sys/fs/inotify/max_queued_events").read_text())
    if limit > 100_000:
        pytest.skip(f"max_queued_events is {limit}: too many files to overflow it")
    burst = tmp_path / "burst"
    burst.mkdir()
    stop = anyio.Event()
    async with watching([str(tmp_path)], debounce_ms=100, stop_event=stop) as batches:
        # Nothing reads the queue meanwhile: two events per file (created, closed after writing) overflow it.
        for index in range(limit // 2 + 100):
            os.close(os.open(burst / f"f{index}", os.O_CREAT | os.O_WRONLY))
        meanwhile = burst / "made-meanwhile"
        meanwhile.mkdir()  # its IN_CREATE is lost with the rest
        async with anyio.create_task_group() as group:
            collected = Collected(batches)
            group.start_soon(collected.run)
            assert await collected.wait(1, 60) == [None]
            # Armed afresh: the folder whose IN_CREATE was lost is watched now.
            (meanwhile / "after.md").write_text("after\n")
            assert await collected.wait(2) == [None, [str(meanwhile / "after.md")]]
            stop.set()


async def test_the_watchfiles_fallback_batches_changes(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    stop = anyio.Event()
    async with anyio.create_task_group() as group:
        collected = Collected(watcher._watchfiles_batches([str(tmp_path)], 100, stop))
        group.start_soon(collected.run)
        await anyio.sleep(0.5)  # awatch arms in its first step
        (tmp_path / "a" / "new.md").write_text("new\n")
        assert await collected.wait(1) == [[str(tmp_path / "a" / "new.md")]]
        stop.set()
        with anyio.fail_after(10):
            await collected.ended.wait()
