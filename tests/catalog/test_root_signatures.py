"""`catalog/signatures.RootSignatures`: a root's signatures file signs that root's entries only, is read again
when it changes, and names itself when it signs nothing where its root is served (issue 35, defect 11).

The records here carry the statement digest of the entries as scanned and a placeholder armored text:
which entry carries which record is decided by the digest alone (verifying is the host's, `core/signing`).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from skillwire.catalog.catalog import SkillCatalog
from skillwire.catalog.filesystem import SkillRoot
from skillwire.catalog.signatures import SIGNATURES_FILE, other_placements, write_signatures
from skillwire.core.signing import SIGNATURE_META_KEY, statement_digest


def _skills(root: Path, *names: str) -> None:
    for name in names:
        (root / name).mkdir(parents=True)
        (root / name / "SKILL.md").write_text(f"---\nname: {name}\ndescription: Skill {name}.\n---\nBody.\n")


def _sign_as_scanned(root: SkillRoot, armored: str = "SIG") -> None:
    """What `skillwire sign` writes for `root` (the statement digests), with a placeholder signature."""
    snapshot = SkillCatalog([root]).snapshot
    records = {
        uri: {"statement": statement_digest(skill.entry), "signature": f"{armored} {uri}"}
        for uri, skill in snapshot.skill_by_uri.items()
    }
    write_signatures(root.path, {**other_placements(root), **records})


def _signature(catalog: SkillCatalog, uri: str) -> object:
    return (catalog.snapshot.skill_by_uri[uri].entry.meta or {}).get(SIGNATURE_META_KEY)


def test_a_root_signs_its_own_entries_not_an_identical_copy(tmp_path: Path) -> None:
    signed, copy = tmp_path / "signed", tmp_path / "copy"
    _skills(signed, "alpha")
    shutil.copytree(signed, copy)
    _sign_as_scanned(SkillRoot(signed))
    # The unprefixed records name skill://alpha/..., which the copy serves; the signed folder is under acme.
    catalog = SkillCatalog([SkillRoot(signed, ("acme",)), SkillRoot(copy)])
    assert _signature(catalog, "skill://alpha/SKILL.md") is None
    assert _signature(catalog, "skill://acme/alpha/SKILL.md") is None
    [line] = catalog.root_signatures.misplaced(catalog.roots)
    assert line == (
        f"{signed / SIGNATURES_FILE} signs 1 skills, none under skill://acme/ where this root is served: its "
        f"skills are served unsigned (sign them there: skillwire sign {signed}=acme --key KEY)"
    )
    # Signed where it is served: only the prefixed entries carry it, and the unprefixed record is kept.
    _sign_as_scanned(SkillRoot(signed, ("acme",)))
    catalog.refresh()
    assert _signature(catalog, "skill://acme/alpha/SKILL.md") == {
        "format": "sshsig",
        "namespace": "skillwire-manifest-v1",
        "signature": "SIG skill://acme/alpha/SKILL.md",
    }
    assert _signature(catalog, "skill://alpha/SKILL.md") is None
    assert catalog.root_signatures.misplaced(catalog.roots) == []
    recorded = json.loads((signed / SIGNATURES_FILE).read_text())["signatures"]
    assert sorted(recorded) == ["skill://acme/alpha/SKILL.md", "skill://alpha/SKILL.md"]


def test_a_re_sign_is_picked_up_by_the_next_refresh_and_announced(tmp_path: Path) -> None:
    root = SkillRoot(tmp_path / "skills")
    _skills(root.path, "alpha", "beta")
    catalog = SkillCatalog([root])
    assert _signature(catalog, "skill://alpha/SKILL.md") is None
    changes: list[object] = []
    catalog.on_change(lambda old, new: changes.append(new))
    _sign_as_scanned(root)
    # What the watcher reports for `sign` (its file, directly in the root).
    catalog.refresh([str(root.path / SIGNATURES_FILE)])
    assert _signature(catalog, "skill://alpha/SKILL.md") is not None
    assert len(changes) == 1  # same files, new signatures: a change clients are told about
    (root.path / "beta" / "notes.md").write_text("edited\n")
    catalog.refresh([str(root.path / "beta" / "notes.md")])
    assert _signature(catalog, "skill://beta/SKILL.md") is None  # edited since signing
    assert catalog.root_signatures.stale(catalog.roots, catalog.snapshot) == ["skill://beta/SKILL.md"]
    _sign_as_scanned(root, "AGAIN")
    catalog.refresh([str(root.path / SIGNATURES_FILE)])
    signature = _signature(catalog, "skill://beta/SKILL.md")
    assert isinstance(signature, dict)
    assert signature["signature"] == "AGAIN skill://beta/SKILL.md"
    assert catalog.root_signatures.stale(catalog.roots, catalog.snapshot) == []
