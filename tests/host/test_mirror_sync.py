"""The pieces of syncing into a host's skills folder that need no server (the end-to-end runs are
`tests/e2e/test_host_sync.py`): the ownership record, the flat layout, the host presets, the default label,
and the repair of a record an interrupted sync left."""

from __future__ import annotations

from pathlib import Path

import pytest

from skillwire.core.entry import SkillEntry
from skillwire.core.errors import LockError
from skillwire.core.manifest import sha256_digest
from skillwire.host.identity import default_label, validate_origin_label
from skillwire.host.mirror.hostdirs import HOST_FOLDERS
from skillwire.host.mirror.layout import Plan, plan_skill
from skillwire.host.mirror.sync import (
    RECORD_NAME,
    Owned,
    SyncRecord,
    flat_plan,
    read_record,
    same_files,
    settle,
    write_record,
)
from skillwire.host.mirror.writer import locked_skill


def entry(files: dict[str, bytes], uri: str = "skill://acme/tools/refunds/SKILL.md") -> SkillEntry:
    root = uri.removesuffix("/SKILL.md")
    resources = [
        {"uri": f"{root}/{path}", "digest": sha256_digest(data), "size": len(data)} for path, data in files.items()
    ]
    name = root.rsplit("/", 1)[-1]
    return SkillEntry.from_wire({"uri": uri, "frontmatter": {"name": name, "description": "d"}, "resources": resources})


def planned(e: SkillEntry) -> Plan:
    plan = plan_skill(e, (e.name,))
    assert isinstance(plan, Plan)
    return plan


def test_a_skill_lands_in_one_folder_named_after_it_without_its_nested_skills() -> None:
    e = entry({"SKILL.md": b"a", "notes.md": b"n", "inner/SKILL.md": b"i", "inner/ref.md": b"r", "innerish.md": b"x"})
    plan = flat_plan(planned(e))
    assert plan.path == "refunds"
    assert [p for p, _ in plan.files] == ["SKILL.md", "innerish.md", "notes.md"]


def test_the_record_round_trips_and_refuses_what_it_cannot_trust(tmp_path: Path) -> None:
    plan = flat_plan(planned(entry({"SKILL.md": b"a", "notes.md": b"n"})))
    record = SyncRecord({"refunds": Owned("http://127.0.0.1:1/mcp", "work", locked_skill(plan))})
    write_record(tmp_path, record)
    again = read_record(tmp_path)
    assert again.to_text() == record.to_text()
    assert same_files(again.skills["refunds"].skill, plan)
    changed = flat_plan(planned(entry({"SKILL.md": b"b", "notes.md": b"n"})))
    assert not same_files(again.skills["refunds"].skill, changed)

    text = record.to_text()
    for bad, reason in (
        ("{", "not JSON"),
        ('{"version": 2}', "version 1"),
        (text.replace('"path": "refunds"', '"path": "../etc"'), "not a safe relative path"),
        (text.replace('"path": "refunds"', '"path": "a/b"'), "not one folder name"),
        (text.replace('"label": "work"', '"label": 3'), "origin and label strings"),
    ):
        (tmp_path / RECORD_NAME).write_text(bad)
        with pytest.raises(LockError, match=reason):
            read_record(tmp_path)


def test_settle_adopts_a_pending_copy_on_disk_and_forgets_one_that_is_not(tmp_path: Path) -> None:
    on_disk = flat_plan(planned(entry({"SKILL.md": b"a"}, "skill://x/one/SKILL.md")))
    not_written = flat_plan(planned(entry({"SKILL.md": b"b"}, "skill://x/two/SKILL.md")))
    (tmp_path / "one").mkdir()
    (tmp_path / "one" / "SKILL.md").write_bytes(b"a")
    (tmp_path / ".skillwire-pull-abc").mkdir()  # a staging directory the crash left
    pending = {
        "one": Owned("o", "l", locked_skill(on_disk)),
        "two": Owned("o", "l", locked_skill(not_written)),
    }
    write_record(tmp_path, SyncRecord(pending=pending))
    record, notes = settle(tmp_path)
    assert sorted(record.skills) == ["one"]
    assert record.pending == {}
    assert notes == ["adopted one (an earlier sync was interrupted after writing it)"]
    assert sorted(p.name for p in tmp_path.iterdir()) == [RECORD_NAME, "one"]  # the record is kept, debris is not
    assert read_record(tmp_path).to_text() == record.to_text()


def test_every_preset_names_a_documented_folder_for_the_person_and_for_a_project(tmp_path: Path) -> None:
    assert sorted(HOST_FOLDERS) == ["agents", "claude", "codex", "copilot", "cursor", "gemini"]
    assert HOST_FOLDERS["claude"].folder(home=tmp_path) == tmp_path / ".claude" / "skills"
    assert HOST_FOLDERS["copilot"].folder(tmp_path / "p") == tmp_path / "p" / ".github" / "skills"
    assert HOST_FOLDERS["codex"].folder(home=tmp_path) == tmp_path / ".agents" / "skills"
    for preset in HOST_FOLDERS.values():
        assert preset.source.startswith("https://")
        assert preset.user.endswith("/skills")
        assert preset.project.endswith("/skills")


def test_the_default_label_is_a_valid_label_that_tells_servers_apart() -> None:
    short = default_label("http://127.0.0.1:8765/mcp")
    other = default_label("http://127.0.0.1:8766/mcp")
    command = default_label(" ".join(("python", "-m", "skillwire", "serve", "--stdio", "/x/" + "y" * 200)))
    for label in (short, other, command):
        assert validate_origin_label(label) == label
    assert short != other
    assert len(command) <= 64
    assert default_label("srv") == "srv"
