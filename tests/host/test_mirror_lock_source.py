"""The git source a pull records in `skills.lock` (host/mirror/lock.py), read from the server's provenance
(core/provenance.py) with distrust: a commit is a full object id or nothing is recorded, the strings are kept
escaped, a lock whose source was edited into something else is refused, and the locked commit of a skill
whose folder a new commit left alone is kept. The end-to-end runs are `tests/e2e/test_git_pull.py`."""

from __future__ import annotations

import json
from typing import Any

import pytest

from skillwire.core.entry import SkillEntry
from skillwire.core.errors import LockError
from skillwire.core.manifest import sha256_digest
from skillwire.core.provenance import PROVENANCE_META_KEY, is_commit_id, provenance_of, read_provenance
from skillwire.host.mirror.drift import compare
from skillwire.host.mirror.layout import Plan, plan_skill
from skillwire.host.mirror.lock import Lock, LockedSource, carried_source
from skillwire.host.mirror.writer import locked_skill, source_problem

SHA1 = "0123456789abcdef0123456789abcdef01234567"
SHA256 = "ab" * 32
OTHER = "fedcba9876543210fedcba9876543210fedcba98"


def entry(source: Any = None, body: bytes = b"a", *, with_source: bool = True) -> SkillEntry:
    wire: dict[str, Any] = {
        "uri": "skill://acme/refunds/SKILL.md",
        "frontmatter": {"name": "refunds", "description": "d"},
        "resources": [{"uri": "skill://acme/refunds/SKILL.md", "digest": sha256_digest(body), "size": len(body)}],
    }
    if with_source:
        wire["_meta"] = {PROVENANCE_META_KEY: source}
    return SkillEntry.from_wire(wire)


def provenance(commit: Any = SHA1, **fields: Any) -> dict[str, Any]:
    return {
        "repository": "https://git.example/skills.git",
        "commit": commit,
        "ref": "main",
        "path": "refunds",
        **fields,
    }


def plan_of(e: SkillEntry) -> Plan:
    plan = plan_skill(e)
    assert isinstance(plan, Plan)
    return plan


@pytest.mark.parametrize("commit", [SHA1, SHA256])
def test_a_full_object_id_is_a_commit(commit: str) -> None:
    assert is_commit_id(commit)
    found = provenance_of(entry(provenance(commit)))
    assert found is not None
    assert found.commit == commit


@pytest.mark.parametrize(
    "commit",
    [
        SHA1[:39],
        SHA1 + "0",
        SHA1.upper(),
        "main",
        f" {SHA1}",
        f"{SHA1}\n",
        "g" * 40,
        SHA256[:63],
        "",
        None,
        40,
        ["x"],
    ],
)
def test_anything_else_is_no_provenance_and_no_source(commit: Any) -> None:
    e = entry(provenance(commit))
    assert provenance_of(e) is None
    assert isinstance(read_provenance(e), str)
    assert isinstance(LockedSource.of_entry(e), str)
    assert locked_skill(plan_of(e)).source is None
    problem = source_problem(e)
    assert problem is not None
    assert problem.startswith("the server's source for skill://acme/refunds/SKILL.md is not recorded in skills.lock")
    if isinstance(commit, str) and commit:
        assert commit.strip() not in problem  # our words, never the server's value


@pytest.mark.parametrize(
    "source",
    [
        "not an object",
        provenance(repository=""),
        provenance(repository=None),
        provenance(path=7),
        provenance(ref="x" * 3000),
    ],
)
def test_a_malformed_provenance_says_why_in_one_line(source: Any) -> None:
    reason = read_provenance(entry(source))
    assert isinstance(reason, str)
    assert "\n" not in reason


def test_no_provenance_is_nothing_to_report() -> None:
    e = entry(with_source=False)
    assert read_provenance(e) is None
    assert LockedSource.of_entry(e) is None
    assert source_problem(e) is None
    assert locked_skill(plan_of(e)).source is None


def test_the_servers_strings_are_recorded_escaped_and_read_back() -> None:
    hostile = provenance(repository="https://git.example/a\u202eb.git\n\x1b[2J", ref="ma\u200bin", path="ref\u2028unds")
    skill = locked_skill(plan_of(entry(hostile)))
    assert skill.source == LockedSource(
        "https://git.example/a\\u202eb.git\\n\\x1b[2J", SHA1, "ma\\u200bin", "ref\\u2028unds"
    )
    lock = Lock("http://127.0.0.1:1/mcp", "all", {skill.uri: skill})
    text = lock.to_text()
    assert text.isascii()  # every hidden character a visible escape
    again = Lock.from_text(text, "skills.lock")
    assert again.to_text() == text
    assert again.skills[skill.uri].source == skill.source
    record = json.loads(text)["skills"][0]
    assert list(record) == ["uri", "name", "path", "source", "files"]
    assert list(record["source"]) == ["repository", "commit", "ref", "path"]


def _lock_text(source: Any) -> str:
    skill = locked_skill(plan_of(entry(provenance())))
    data = json.loads(Lock("o", "all", {skill.uri: skill}).to_text())
    data["skills"][0]["source"] = source
    return json.dumps(data)


@pytest.mark.parametrize(
    ("source", "reason"),
    [
        ("x", "skills[0].source is not an object"),
        (provenance(SHA1.upper()), "skills[0].source.commit is not a full git object id"),
        (provenance(SHA1[:12]), "skills[0].source.commit is not a full git object id"),
        (provenance(repository="https://a\u202eb"), "skills[0].source.repository is not a printable string"),
        (provenance(repository=""), "skills[0].source.repository is empty"),
        (provenance(path=None), "skills[0].source.path is not a printable string"),
        (provenance(ref=["main"]), "skills[0].source.ref is not a printable string"),
    ],
)
def test_a_lock_with_an_edited_source_is_refused_naming_the_field(source: Any, reason: str) -> None:
    with pytest.raises(LockError, match=r"not a usable skills\.lock") as caught:
        Lock.from_text(_lock_text(source), "skills.lock")
    assert reason in str(caught.value)


def test_a_lock_without_sources_reads_as_before() -> None:
    skill = locked_skill(plan_of(entry(with_source=False)))
    text = Lock("o", "named", {skill.uri: skill}).to_text()
    assert '"source"' not in text
    assert Lock.from_text(text, "skills.lock").skills[skill.uri].source is None


def test_the_locked_commit_stays_while_the_folder_and_files_stay() -> None:
    locked = locked_skill(plan_of(entry(provenance(SHA1))))
    newer = LockedSource.of_entry(entry(provenance(OTHER)))
    assert isinstance(newer, LockedSource)
    # The same files at a newer commit: the lock keeps the commit it has (nothing for --check to say).
    assert carried_source(locked, locked.files, newer) == locked.source
    assert locked_skill(plan_of(entry(provenance(OTHER))), locked).source == locked.source
    assert compare(locked, entry(provenance(OTHER))).status == "in step"
    # Other files: the newer commit, and --check names both.
    changed = entry(provenance(OTHER), b"b")
    assert locked_skill(plan_of(changed), locked).source == newer
    drift = compare(locked, changed)
    assert drift.status == "changed upstream"
    assert drift.note == f"the server's commit is now {OTHER} (locked: {SHA1})"
    # Another ref or folder with the same files: the source moved.
    moved = compare(locked, entry(provenance(OTHER, ref="release")))
    assert moved.status == "changed upstream"
    assert moved.note is not None
    assert moved.note.startswith("now served from https://git.example/skills.git @ release = " + OTHER)
    # No provenance any more, or one that is not usable.
    gone = compare(locked, entry(with_source=False))
    assert gone.note == (
        f"no longer served from a git repository; locked from https://git.example/skills.git @ main = {SHA1} (refunds)"
    )
    bad = compare(locked, entry(provenance("nope")))
    assert bad.note is not None
    assert bad.note.startswith("no longer served from a git repository (its commit is not a full git object id")
    # A skill that had no source and now has one.
    plain = locked_skill(plan_of(entry(with_source=False)))
    assert (
        compare(plain, entry(provenance())).note
        == "now served from https://git.example/skills.git @ main = " + SHA1 + " (refunds)"
    )
