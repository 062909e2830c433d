"""Issue 11 item 7: files swapped after (or during) a scan are never followed, waited on or served.

Between a scan and a read, a served file can become a symlink to a file outside the root, a FIFO or
a directory, and a skill folder can become a symlink to a folder elsewhere. Every open on the scan,
read and host paths refuses all of them: the server answers "changed", the scan skips the skill,
the host raises `VerificationFailed`, and nothing blocks.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from skillwire.catalog.catalog import SkillCatalog
from skillwire.catalog.digests import DigestCache, pack_stat
from skillwire.catalog.safe_open import read_regular
from skillwire.catalog.snapshot import CatalogSnapshot
from skillwire.core.errors import ServedFileChanged, UnsafeFile, VerificationFailed
from skillwire.core.json import JSONValue
from skillwire.core.manifest import sha256_digest
from skillwire.host.approvals import ApprovalStore
from skillwire.host.cache import ContentCache
from skillwire.host.host import SkillHost
from support import skills

pytestmark = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs and symlinks (POSIX)")
CANARY = "OUTSIDE-THE-ROOT-4b1d"


def skill(root: Path, name: str, body: str = "Body.\n") -> Path:
    files = {"references/notes.md": f"notes of {name}\n"}
    return skills.write_skill(root, name, files, description=f"The {name} skill.", body=body)


def release_fifo(path: Path) -> None:
    """Open a FIFO for writing, which unblocks a reader stuck in open() (what today's main does)."""
    with contextlib.suppress(OSError):  # nobody is blocked on it: nothing to release
        os.close(os.open(path, os.O_WRONLY | os.O_NONBLOCK))


def within(seconds: float, work: Callable[[], Any], fifo: Path | None = None) -> Any:
    """`work()` in a thread; fails the test (and releases a blocked open) when it takes longer."""
    box: list[Any] = []
    errors: list[BaseException] = []

    def run() -> None:
        try:
            box.append(work())
        except BaseException as exc:  # handed to the test's thread
            errors.append(exc)

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    worker.join(seconds)
    hung = worker.is_alive()
    if hung and fifo is not None:
        release_fifo(fifo)
        worker.join(5)
    assert not hung, f"blocked for more than {seconds}s"
    if errors:
        raise errors[0]
    return box[0]


class SwapAfterHashing(DigestCache):
    """A digest cache that lets the test act at the worst moment of a scan: SKILL.md's digest is
    known, its frontmatter is not, so it is opened and read to be parsed (everything else is the real
    cache and the real scan). A SKILL.md the scan hashes itself is parsed from the very bytes hashed,
    so the window exists only for a digest known before (a cache file of another root set, an edit
    that restored the bytes): the digest is hashed here, as a restart would find it."""

    def __init__(self, target: Path, action: Callable[[], None]) -> None:
        super().__init__()
        self.target_digest = sha256_digest(target.read_bytes())
        real = os.path.realpath(target)
        self.digest(real, pack_stat(os.stat(real, follow_symlinks=False)))
        self.action: Callable[[], None] | None = action

    def frontmatter(self, digest: str) -> dict[str, JSONValue] | None:
        if self.action is not None and digest == self.target_digest:
            action, self.action = self.action, None
            action()
        return super().frontmatter(digest)


def test_a_fifo_swapped_in_for_skill_md_during_the_scan_skips_the_skill_without_blocking(tmp_path: Path) -> None:
    root = tmp_path / "skills"
    skill(root, "good")
    target = skill(root, "raced") / "SKILL.md"

    def swap() -> None:
        target.unlink()
        os.mkfifo(target)

    catalog = SkillCatalog([root], digest_cache=SwapAfterHashing(target, swap))
    snapshot: CatalogSnapshot = within(10, catalog.refresh, fifo=target)
    assert list(snapshot.skill_by_uri) == ["skill://good/SKILL.md"]
    [skipped] = snapshot.skipped
    assert skipped.location == str(root / "raced")
    assert "no longer the file the scan found" in skipped.reason or "regular file" in skipped.reason


def test_a_symlink_swapped_in_for_skill_md_during_the_scan_is_not_followed(tmp_path: Path) -> None:
    root = tmp_path / "skills"
    target = skill(root, "raced") / "SKILL.md"
    outside = tmp_path / "outside.md"
    outside.write_bytes(target.read_bytes())  # the same bytes: only the open itself can tell

    def swap() -> None:
        target.unlink()
        target.symlink_to(outside)

    snapshot = within(10, SkillCatalog([root], digest_cache=SwapAfterHashing(target, swap)).refresh)
    assert not snapshot.skill_by_uri
    assert "symlink" in snapshot.skipped[0].reason


@pytest.fixture
def served(tmp_path: Path) -> tuple[Path, CatalogSnapshot]:
    root = tmp_path / "skills"
    skill(root, "alpha")
    skill(root, "beta")
    return root, SkillCatalog([root]).snapshot


def replace_with_symlink_to_a_copy(path: Path, outside: Path) -> None:
    """`path` (file or folder) becomes a symlink to an identical copy outside the root: the digest
    still matches, so only refusing to follow the link keeps the outside copy unopened."""
    if path.is_dir():
        shutil.copytree(path, outside)
        shutil.rmtree(path)
    else:
        outside.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, outside)
        path.unlink()
    path.symlink_to(outside)


@pytest.mark.parametrize("swapped", ["file", "skill folder", "references folder"])
def test_a_served_path_swapped_for_a_symlink_after_the_scan_is_refused(
    served: tuple[Path, CatalogSnapshot], tmp_path: Path, swapped: str
) -> None:
    root, snapshot = served
    file = snapshot.files["skill://alpha/references/notes.md"]
    where = {
        "file": root / "alpha" / "references" / "notes.md",
        "skill folder": root / "alpha",
        "references folder": root / "alpha" / "references",
    }[swapped]
    replace_with_symlink_to_a_copy(where, tmp_path / "elsewhere" / where.name)
    with pytest.raises(UnsafeFile, match="symlink"):
        file.read()
    assert snapshot.files["skill://beta/references/notes.md"].read() == b"notes of beta\n"


@pytest.mark.parametrize("kind", ["fifo", "directory"])
def test_a_served_file_swapped_for_a_fifo_or_a_directory_is_refused_without_blocking(
    served: tuple[Path, CatalogSnapshot], kind: str
) -> None:
    root, snapshot = served
    path = root / "alpha" / "references" / "notes.md"
    path.unlink()
    if kind == "fifo":
        os.mkfifo(path)
    else:
        path.mkdir()
    with pytest.raises(UnsafeFile, match="no longer a regular file"):
        within(10, snapshot.files["skill://alpha/references/notes.md"].read, fifo=path if kind == "fifo" else None)


def test_the_scan_open_refuses_a_different_file_at_the_same_path(tmp_path: Path) -> None:
    first = tmp_path / "a.md"
    first.write_text("one")
    st = first.stat()
    (tmp_path / "b.md").write_text("two")
    (tmp_path / "b.md").replace(first)  # another file under the walked name (both exist at once: another inode)
    identity = (st.st_dev, st.st_ino)
    with pytest.raises(UnsafeFile, match="no longer the file the scan found"):
        read_regular(str(first), 3, identity=identity)


# -- local skills in the host -------------------------------------------------------------------------------


def local_host(tmp_path: Path) -> SkillHost:
    return SkillHost(
        approvals=ApprovalStore(tmp_path / "approvals.sqlite"),
        cache=ContentCache(tmp_path / "cache", discovery_paths=[]),
    )


async def load_local(tmp_path: Path, root: Path, change: Callable[[Path], None]) -> str:
    async with local_host(tmp_path) as host:
        host.add_local("mine", [root])
        change(root / "deploy" / "SKILL.md")
        loaded = await host.load("mine", "skill://deploy/SKILL.md")
        return loaded.instructions.text


def test_a_local_skill_md_replaced_by_a_symlink_to_a_file_outside_is_refused(tmp_path: Path) -> None:
    root = tmp_path / "local"
    skill(root, "deploy", "Deploy the local way.\n")
    outside = tmp_path / "outside.md"
    outside.write_text(f"---\nname: deploy\ndescription: The deploy skill.\n---\n{CANARY}\n")

    def to_link(path: Path) -> None:
        path.unlink()
        path.symlink_to(outside)

    with pytest.raises(VerificationFailed, match="can no longer be read safely"):
        asyncio.run(load_local(tmp_path, root, to_link))


def test_a_local_skill_md_replaced_by_a_fifo_fails_load_without_blocking(tmp_path: Path) -> None:
    root = tmp_path / "local"
    skill(root, "deploy")
    fifo = root / "deploy" / "SKILL.md"

    def to_fifo(path: Path) -> None:
        path.unlink()
        os.mkfifo(path)

    with pytest.raises(VerificationFailed, match="no longer a regular file"):
        within(10, lambda: asyncio.run(load_local(tmp_path, root, to_fifo)), fifo=fifo)


def test_a_local_skill_md_rewritten_after_the_scan_is_not_returned_unverified(tmp_path: Path) -> None:
    root = tmp_path / "local"
    skill(root, "deploy")

    def rewrite(path: Path) -> None:
        path.write_text(f"---\nname: deploy\ndescription: The deploy skill.\n---\n{CANARY}\n")

    with pytest.raises(VerificationFailed, match="changed since it was scanned"):
        asyncio.run(load_local(tmp_path, root, rewrite))


def test_an_unchanged_local_skill_still_loads(tmp_path: Path) -> None:
    root = tmp_path / "local"
    skill(root, "deploy", "Deploy the local way.\n")
    assert "Deploy the local way." in asyncio.run(load_local(tmp_path, root, lambda path: None))


def test_file_changed_is_still_what_a_rewritten_served_file_raises(served: tuple[Path, CatalogSnapshot]) -> None:
    root, snapshot = served
    (root / "alpha" / "references" / "notes.md").write_text("other bytes\n")
    with pytest.raises(ServedFileChanged):
        snapshot.files["skill://alpha/references/notes.md"].read()
