"""skillwire.host.identity and skillwire.host.approvals: approvals keyed by (origin, uri), bound to a file set."""

from __future__ import annotations

import json
import sqlite3
import stat
import time
from pathlib import Path

import pytest

from skillwire.core.errors import ApprovalStoreError, InvalidSkillURI
from skillwire.core.manifest import ManifestFile, manifest_hash, sha256_digest
from skillwire.host.approvals import ApprovalStatus, ApprovalStore
from skillwire.host.identity import SkillRef, validate_origin_label

SKILL = "skill://acme/refunds/SKILL.md"


def listed(uri: str, content: bytes) -> ManifestFile:
    return ManifestFile(uri, sha256_digest(content), len(content))


def manifest(**contents: bytes) -> list[ManifestFile]:
    """`manifest(SKILL_md=b"...", ref_md=b"...")`: file names with `_` for `.`, under the refunds skill."""
    return [listed(f"skill://acme/refunds/{name.replace('_', '.')}", data) for name, data in contents.items()]


BASE = manifest(SKILL_md=b"---\nname: refunds\n---\nbody\n", policy_md=b"policy", data_csv=b"a,b\n")


@pytest.fixture
def store(tmp_path: Path) -> ApprovalStore:
    return ApprovalStore(tmp_path / "approvals.sqlite")


# -- identity ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("label", ["work", "a", "GitHub_2", "acme.prod-eu", "-x", "_", "x" * 64])
def test_valid_origin_labels(label: str) -> None:
    assert validate_origin_label(label) == label


@pytest.mark.parametrize(
    ("label", "reason"),
    [
        ("", "empty"),
        (".hidden", "starts with '.'"),
        ("..", "starts with '.'"),
        ("a/b", "'/'"),
        ("a b", "' '"),
        ("work\n", "'\\n'"),
        ("ü", "'ü'"),
        ("x" * 65, "65 characters"),
    ],
)
def test_invalid_origin_labels(label: str, reason: str) -> None:
    with pytest.raises(ValueError, match="invalid origin label") as caught:
        validate_origin_label(label)
    assert reason in str(caught.value)


def test_skill_ref_is_origin_and_uri() -> None:
    a, b = SkillRef("a", SKILL), SkillRef("b", SKILL)
    assert a != b
    assert len({a, b}) == 2
    assert str(a) == f"a {SKILL}"
    assert sorted([b, a]) == [a, b]
    with pytest.raises(ValueError, match="origin label"):
        SkillRef("../x", SKILL)
    with pytest.raises(InvalidSkillURI):
        SkillRef("a", "skill://acme/%2e%2e/SKILL.md")


# -- approve / check ----------------------------------------------------------------------------------------


def test_approve_then_check_is_approved(store: ApprovalStore) -> None:
    ref = SkillRef("work", SKILL)
    before = time.time()
    approval = store.approve(ref, BASE, allowed_tools="Bash(git:*)")
    assert approval.manifest_hash == manifest_hash(BASE)
    assert before - 1 <= approval.approved_at.timestamp() <= time.time() + 1
    assert approval.approved_at.tzinfo is not None

    check = store.check(ref, list(reversed(BASE)))  # order does not matter
    status_text: str = check.status  # a StrEnum: callers may compare with plain strings
    assert status_text == "approved"
    assert check.status is ApprovalStatus.APPROVED
    assert check.approved
    assert check.approval is not None
    assert check.approval.allowed_tools == "Bash(git:*)"
    assert check.approval.files == tuple(sorted(BASE))
    assert check.diff is None
    assert store.check(ref, BASE).approved  # checking does not consume it


def test_never_approved_is_missing(store: ApprovalStore) -> None:
    check = store.check(SkillRef("work", SKILL), BASE)
    assert check.status is ApprovalStatus.MISSING
    assert not check.approved
    assert check.approval is None
    assert check.diff is None


def test_changed_digest_revokes_and_names_the_file(store: ApprovalStore) -> None:
    ref = SkillRef("work", SKILL)
    store.approve(ref, BASE, allowed_tools="Read")
    edited = [listed(f.uri, b"edited policy") if f.uri.endswith("policy.md") else f for f in BASE]

    check = store.check(ref, edited)
    assert check.status is ApprovalStatus.CHANGED
    assert not check.approved
    assert check.diff is not None
    assert check.diff.changed == ("skill://acme/refunds/policy.md",)
    assert check.diff.added == ()
    assert check.diff.removed == ()
    assert check.approval is not None
    assert check.approval.allowed_tools == "Read"

    assert store.check(ref, edited).status is ApprovalStatus.MISSING  # revoked, not just reported
    assert store.check(ref, BASE).status is ApprovalStatus.MISSING  # the old set no longer counts either
    assert store.list() == []


def test_size_alone_differing_is_a_change(store: ApprovalStore) -> None:
    ref = SkillRef("work", SKILL)
    store.approve(ref, BASE)
    lying = [ManifestFile(f.uri, f.digest, f.size + 1) if f.uri.endswith("data.csv") else f for f in BASE]
    check = store.check(ref, lying)
    assert check.status is ApprovalStatus.CHANGED
    assert check.diff is not None
    assert check.diff.changed == ("skill://acme/refunds/data.csv",)


def test_added_and_removed_files_are_listed(store: ApprovalStore) -> None:
    ref = SkillRef("work", SKILL)
    store.approve(ref, BASE)
    grown = [*BASE, *manifest(run_sh=b"rm -rf /")]
    check = store.check(ref, grown)
    assert check.diff is not None
    assert check.diff.added == ("skill://acme/refunds/run.sh",)
    assert check.diff.removed == ()
    assert check.diff.changed == ()

    store.approve(ref, BASE)
    shrunk = [f for f in BASE if not f.uri.endswith("data.csv")]
    check = store.check(ref, shrunk)
    assert check.status is ApprovalStatus.CHANGED
    assert check.diff is not None
    assert check.diff.removed == ("skill://acme/refunds/data.csv",)
    assert store.check(ref, shrunk).status is ApprovalStatus.MISSING


def test_reapproval_replaces_the_bound_set(store: ApprovalStore) -> None:
    ref = SkillRef("work", SKILL)
    store.approve(ref, BASE, allowed_tools="Read")
    edited = [*BASE, *manifest(new_md=b"new")]
    store.approve(ref, edited)
    assert store.check(ref, edited).approved
    approval = store.get(ref)
    assert approval is not None
    assert approval.allowed_tools is None
    assert store.check(ref, BASE).status is ApprovalStatus.CHANGED


# -- identity in the store ----------------------------------------------------------------------------------


def test_same_uri_under_two_origins_is_independent(store: ApprovalStore) -> None:
    a, b = SkillRef("alpha", SKILL), SkillRef("beta", SKILL)
    store.approve(a, BASE)
    assert store.check(b, BASE).status is ApprovalStatus.MISSING

    other = manifest(SKILL_md=b"beta's own SKILL.md")
    store.approve(b, other)
    assert store.check(b, BASE).status is ApprovalStatus.CHANGED  # revokes b only
    assert store.check(a, BASE).approved
    assert store.check(b, other).status is ApprovalStatus.MISSING


def test_purge_origin_removes_only_that_origin(store: ApprovalStore) -> None:
    other_skill = "skill://acme/billing/SKILL.md"
    store.approve(SkillRef("alpha", SKILL), BASE)
    store.approve(SkillRef("alpha", other_skill), BASE)
    store.approve(SkillRef("beta", SKILL), BASE)
    assert store.purge_origin("alpha") == 2
    assert [a.ref for a in store.list()] == [SkillRef("beta", SKILL)]
    assert store.check(SkillRef("alpha", SKILL), BASE).status is ApprovalStatus.MISSING
    assert store.check(SkillRef("beta", SKILL), BASE).approved
    assert store.purge_origin("alpha") == 0


def test_list_filters_by_origin_and_revoke(store: ApprovalStore) -> None:
    refs = [SkillRef("beta", SKILL), SkillRef("alpha", "skill://acme/z/SKILL.md"), SkillRef("alpha", SKILL)]
    for ref in refs:
        store.approve(ref, BASE)
    assert [a.ref for a in store.list()] == sorted(refs)
    assert [a.ref for a in store.list("alpha")] == sorted(refs[1:])
    assert store.revoke(refs[0]) is True
    assert store.revoke(refs[0]) is False
    assert store.check(refs[0], BASE).status is ApprovalStatus.MISSING


# -- dynamic and malformed ----------------------------------------------------------------------------------


def test_dynamic_skills_are_never_persisted(store: ApprovalStore) -> None:
    ref = SkillRef("work", SKILL)
    with pytest.raises(ValueError, match="must not cover dynamic content"):
        store.approve(ref, [])
    with pytest.raises(ValueError, match="must not cover dynamic content"):
        store.approve(ref, BASE, dynamic=True)
    assert store.list() == []


def test_a_skill_turning_dynamic_revokes_its_approval(store: ApprovalStore) -> None:
    ref = SkillRef("work", SKILL)
    store.approve(ref, BASE)
    check = store.check(ref, BASE, dynamic=True)
    assert check.status is ApprovalStatus.CHANGED
    assert check.diff is not None
    assert set(check.diff.removed) == {f.uri for f in BASE}
    assert store.check(ref, BASE).status is ApprovalStatus.MISSING


def test_malformed_manifests_are_refused(store: ApprovalStore) -> None:
    ref = SkillRef("work", SKILL)
    with pytest.raises(ValueError, match="twice"):
        store.approve(ref, [*BASE, BASE[0]])
    with pytest.raises(ValueError, match="digest"):
        store.approve(ref, [ManifestFile(SKILL, "sha256:XYZ", 1)])
    with pytest.raises(ValueError, match="size"):
        store.approve(ref, [ManifestFile(SKILL, BASE[0].digest, -1)])


# -- persistence ---------------------------------------------------------------------------------------------


def test_approvals_survive_reopening_and_the_file_is_private(tmp_path: Path) -> None:
    path = tmp_path / "nested" / "approvals.sqlite"
    with ApprovalStore(path) as first:
        first.approve(SkillRef("work", SKILL), BASE, allowed_tools="Read")
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    with ApprovalStore(path) as second:
        check = second.check(SkillRef("work", SKILL), BASE)
        assert check.approved
        assert check.approval is not None
        assert check.approval.allowed_tools == "Read"
        assert second._connection.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


# -- corruption ----------------------------------------------------------------------------------------------


def test_a_file_that_is_not_a_database_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "approvals.sqlite"
    path.write_bytes(b"this is not SQLite at all, just some text that is long enough to matter" * 100)
    with pytest.raises(ApprovalStoreError, match="corrupt or not SQLite") as caught:
        ApprovalStore(path)
    assert caught.value.path == str(path)


def test_a_foreign_sqlite_database_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "approvals.sqlite"
    with sqlite3.connect(path) as connection:
        connection.execute("CREATE TABLE something_else (x)")
    connection.close()
    with pytest.raises(ApprovalStoreError, match="not a skillwire approval store"):
        ApprovalStore(path)


def test_a_newer_schema_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "approvals.sqlite"
    ApprovalStore(path).close()
    connection = sqlite3.connect(path)
    connection.execute("PRAGMA user_version = 99")
    connection.close()
    with pytest.raises(ApprovalStoreError, match="schema version 99"):
        ApprovalStore(path)


def test_an_edited_row_fails_closed(tmp_path: Path) -> None:
    path = tmp_path / "approvals.sqlite"
    ref = SkillRef("work", SKILL)
    with ApprovalStore(path) as store:
        store.approve(ref, BASE)
    # Someone edits the stored file list so a diff would misreport what the approval covers.
    forged = json.dumps([f.to_wire() for f in manifest(SKILL_md=b"forged")])
    connection = sqlite3.connect(path)
    with connection:
        connection.execute("UPDATE approvals SET files_json = ?", (forged,))
    connection.close()
    with ApprovalStore(path) as store, pytest.raises(ApprovalStoreError, match="does not hash to its own file list"):
        store.check(ref, BASE)
    with ApprovalStore(path) as store:
        assert store.revoke(ref)  # the way out the message names
        assert store.check(ref, BASE).status is ApprovalStatus.MISSING
