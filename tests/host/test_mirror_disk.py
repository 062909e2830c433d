"""The mirror's disk rules in process, on real folders (the end-to-end runs are `tests/e2e/test_host_sync.py` and
`tests/e2e/test_cli_pull*.py`): a copy against its record as data (`DiskProblem`), whose file is this
(`unrecorded_files`), the person's files carried into a new copy (`carry_over`) or in its way (`in_the_way`),
and file sets compared by the one owner (`core.manifest.diff_file_sets`)."""

from __future__ import annotations

import os
from pathlib import Path

from skillwire.core.entry import SkillEntry
from skillwire.core.manifest import ManifestDiff, ManifestFile, diff_file_sets, diff_manifests, sha256_digest
from skillwire.host.mirror.drift import DiskProblem, disk_problem, recorded_diff, unrecorded_files
from skillwire.host.mirror.layout import Plan, plan_skill
from skillwire.host.mirror.swap import carry_over
from skillwire.host.mirror.sync import Owned, in_the_way, yours
from skillwire.host.mirror.writer import locked_skill

FILES = {"SKILL.md": b"---\nname: refunds\ndescription: d\n---\nsteps\n", "examples/email.md": b"hello\n"}


def planned(files: dict[str, bytes]) -> Plan:
    root = "skill://acme/refunds"
    resources = [{"uri": f"{root}/{p}", "digest": sha256_digest(d), "size": len(d)} for p, d in files.items()]
    entry = SkillEntry.from_wire(
        {"uri": f"{root}/SKILL.md", "frontmatter": {"name": "refunds", "description": "d"}, "resources": resources}
    )
    plan = plan_skill(entry, ("refunds",))
    assert isinstance(plan, Plan)
    return plan


def written(folder: Path, files: dict[str, bytes]) -> Owned:
    for relative, data in files.items():
        path = folder / "refunds" / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    return Owned("http://127.0.0.1:1/mcp", "work", locked_skill(planned(files)))


def test_a_copy_against_its_record_is_data_with_one_wording(tmp_path: Path) -> None:
    owned = written(tmp_path, FILES)
    assert disk_problem(tmp_path, owned.skill) is None
    (tmp_path / "refunds" / "SKILL.md").write_bytes(b"edited\n")
    (tmp_path / "refunds" / "examples" / "email.md").unlink()
    problem = disk_problem(tmp_path, owned.skill)
    assert problem == DiskProblem(lacking=("examples/email.md",), differing=("SKILL.md",))
    assert problem.status == "edited locally"
    assert problem.describe() == "lacks examples/email.md; has other bytes in SKILL.md"
    os.rename(tmp_path / "refunds", tmp_path / "elsewhere")
    gone = disk_problem(tmp_path, owned.skill)
    assert gone == DiskProblem(missing=True)
    assert (gone.status, gone.describe()) == ("missing", "is missing")


def test_what_no_record_lists_is_the_persons_and_links_never_are_skillwires(tmp_path: Path) -> None:
    owned = written(tmp_path, FILES)
    folder = tmp_path / "refunds"
    assert yours(tmp_path, owned) == []
    (folder / "mine.md").write_text("mine\n")
    (folder / "examples" / "deep").mkdir()
    (folder / "examples" / "deep" / "x.md").write_text("x\n")
    (folder / "link").symlink_to(tmp_path, target_is_directory=True)
    assert yours(tmp_path, owned) == ["examples/deep/x.md", "link", "mine.md"]
    # The same rule for a lock: paths relative to the lock's directory, recorded by whatever says so.
    assert unrecorded_files(folder, lambda relative: relative == "refunds/SKILL.md", relative_to=tmp_path) == [
        "refunds/examples/deep/x.md",
        "refunds/examples/email.md",
        "refunds/link",
        "refunds/mine.md",
    ]


def test_the_persons_files_are_carried_into_a_new_copy_unless_the_copy_has_them(tmp_path: Path) -> None:
    owned = written(tmp_path, FILES)
    folder = tmp_path / "refunds"
    (folder / "notes").mkdir()
    (folder / "notes" / "mine.md").write_text("mine\n")
    (folder / "shortcut").symlink_to("notes/mine.md")
    kept = yours(tmp_path, owned)
    staged = tmp_path / "staged"
    staged.mkdir()
    carry_over(folder, staged, kept)
    assert (staged / "notes" / "mine.md").read_text() == "mine\n"
    assert os.readlink(staged / "shortcut") == "notes/mine.md"  # the link itself, not what it points at
    assert in_the_way(kept, planned(FILES)) == []
    clashing = planned({**FILES, "notes": b"the server's file named like the person's folder\n"})
    assert in_the_way(kept, clashing) == ["notes/mine.md"]
    assert in_the_way(kept, planned({**FILES, "shortcut": b"s\n"})) == ["shortcut"]


def test_file_sets_are_compared_by_the_one_owner_keyed_by_uri_or_by_path() -> None:
    before = {"a": ("sha256:" + "0" * 64, 1), "b": ("sha256:" + "1" * 64, 2), "c": ("sha256:" + "2" * 64, 3)}
    after = {"a": ("sha256:" + "0" * 64, 1), "b": ("sha256:" + "9" * 64, 2), "d": ("sha256:" + "3" * 64, 4)}
    assert diff_file_sets(before, after) == ManifestDiff(added=("d",), removed=("c",), changed=("b",))
    old = [ManifestFile(f"skill://x/{k}", d, s) for k, (d, s) in before.items()]
    new = [ManifestFile(f"skill://x/{k}", d, s) for k, (d, s) in after.items()]
    assert diff_manifests(old, new) == ManifestDiff(("skill://x/d",), ("skill://x/c",), ("skill://x/b",))
    locked = locked_skill(planned(FILES))
    assert not recorded_diff(locked, planned(FILES).files)
    moved = recorded_diff(locked, planned({**FILES, "SKILL.md": b"v2\n", "new.md": b"n\n"}).files)
    assert moved == ManifestDiff(added=("new.md",), changed=("SKILL.md",))
