"""The signed statement fixes the file paths the host uses (issue 19, defect 2).

A proxy that keeps the publisher's signature but respells the entry's URIs must not get a verified
load with the signed bytes under other names: `skill://acme/%61/SKILL.md` beside
`skill://acme/a/xxscripts/run.sh` (the statement used to cut paths out of the raw text, and the two
extra characters of `%61` cut `xx` off), and a split `%XX` escape that turns a signed `2.sh` into `b.sh`.
The signature is made by OpenSSH's own `ssh-keygen` through `skillwire sign` in a temporary folder;
the entries go through the real `SkillEntry.from_wire` and `TrustPolicy.inspect`, which is what the
load decision (`host/load.py`) asks under `require`.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from typing import Any

import pytest

from skillwire.catalog.catalog import SkillCatalog
from skillwire.catalog.filesystem import SkillRoot
from skillwire.catalog.signatures import SIGNATURES_FILE, SignatureBook
from skillwire.core.entry import SkillEntry
from skillwire.core.errors import SignatureInvalid
from skillwire.core.signing import verify_entry
from skillwire.host.identity import SkillRef
from skillwire.host.trust import TrustedKey, TrustPolicy

pytestmark = pytest.mark.skipif(shutil.which("ssh-keygen") is None, reason="OpenSSH's ssh-keygen is not installed")
SKILLWIRE = [sys.executable, "-m", "skillwire.cli.main"]
SCRIPT = b"#!/bin/sh\necho signed script\n"


@pytest.fixture(scope="module")
def signed(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, dict[str, Any]], TrustPolicy]:
    """The signed wire entries of two skills, and a `require` policy trusting their publisher."""
    base = tmp_path_factory.mktemp("signed")
    key = base / "publisher"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "publisher", "-f", str(key)], check=True)
    root = base / "skills"
    for folder, script in (("acme/a", "scripts/run.sh"), ("acme/tool", "2.sh")):
        name = folder.rsplit("/", 1)[-1]
        (root / folder / script).parent.mkdir(parents=True, exist_ok=True)
        (root / folder / "SKILL.md").write_text(f"---\nname: {name}\ndescription: Runs {script}.\n---\nRun {script}.\n")
        (root / folder / script).write_bytes(SCRIPT)
    done = subprocess.run([*SKILLWIRE, "sign", str(root), "--key", str(key)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    book = SignatureBook.load([root / SIGNATURES_FILE])
    entries = {
        uri: book.annotate(skill.entry).to_wire()
        for uri, skill in SkillCatalog([SkillRoot(root)]).snapshot.skill_by_uri.items()
    }
    trust = TrustPolicy("require", (TrustedKey("acme", (base / "publisher.pub").read_text().strip()),))
    return entries, trust


def respelled(wire: dict[str, Any], uri: str, files: dict[str, str]) -> SkillEntry:
    """`wire` served under `uri`, each file (by its old URI) under a new URI, the signature kept."""
    resources = [{**item, "uri": files.get(item["uri"], item["uri"])} for item in wire["resources"]]
    return SkillEntry.from_wire({**wire, "uri": uri, "resources": resources})


def test_the_untouched_entries_verify(signed: tuple[dict[str, dict[str, Any]], TrustPolicy]) -> None:
    entries, trust = signed
    for uri, wire in entries.items():
        assert trust.inspect(SkillRef("proxy", uri), SkillEntry.from_wire(wire)).status == "verified"


def test_a_percent_encoded_skill_path_cannot_rename_a_signed_file(
    signed: tuple[dict[str, dict[str, Any]], TrustPolicy],
) -> None:
    entries, trust = signed
    proxied = respelled(
        entries["skill://acme/a/SKILL.md"],
        "skill://acme/%61/SKILL.md",
        {
            "skill://acme/a/SKILL.md": "skill://acme/%61/SKILL.md",
            "skill://acme/a/scripts/run.sh": "skill://acme/a/xxscripts/run.sh",
        },
    )
    check = trust.inspect(SkillRef("proxy", proxied.uri), proxied)
    assert check.status == "invalid"
    assert "not in canonical form" in check.reason
    with pytest.raises(SignatureInvalid):
        verify_entry(proxied)


def test_a_split_escape_cannot_turn_a_signed_2_sh_into_b_sh(
    signed: tuple[dict[str, dict[str, Any]], TrustPolicy],
) -> None:
    entries, trust = signed
    # The raw text of `to%6Fl/` is two characters longer than `tool/`, so cutting the file URI at the
    # skill root's raw length read `skill://acme/tool/%62.sh` (b.sh) as "2.sh".
    proxied = respelled(
        entries["skill://acme/tool/SKILL.md"],
        "skill://acme/to%6Fl/SKILL.md",
        {
            "skill://acme/tool/SKILL.md": "skill://acme/to%6Fl/SKILL.md",
            "skill://acme/tool/2.sh": "skill://acme/tool/%62.sh",
        },
    )
    assert trust.inspect(SkillRef("proxy", proxied.uri), proxied).status == "invalid"
    # Spelled canonically, the rename is a different statement: it does not verify either.
    renamed = respelled(
        entries["skill://acme/tool/SKILL.md"],
        "skill://acme/tool/SKILL.md",
        {"skill://acme/tool/2.sh": "skill://acme/tool/b.sh"},
    )
    check = trust.inspect(SkillRef("proxy", renamed.uri), renamed)
    assert check.status == "invalid"
    assert "does not verify" in check.reason


@pytest.mark.parametrize("spelling", ["skill://acme/tool/%32.sh", "skill://acme/tool/2%2Esh"])
def test_a_needless_escape_of_a_signed_file_is_refused(
    signed: tuple[dict[str, dict[str, Any]], TrustPolicy], spelling: str
) -> None:
    # The same file, only spelled otherwise: refused rather than canonicalised, since the host keys
    # approvals and its cache by the URI text the server sent.
    entries, trust = signed
    proxied = respelled(
        entries["skill://acme/tool/SKILL.md"], "skill://acme/tool/SKILL.md", {"skill://acme/tool/2.sh": spelling}
    )
    assert trust.inspect(SkillRef("proxy", proxied.uri), proxied).status == "invalid"
