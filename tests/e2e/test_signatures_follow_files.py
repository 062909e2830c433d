"""Publisher signatures follow the files they were signed beside, and a re-sign is live: issue 35, defect 11.

Real `skillwire serve` processes over HTTP, real `skillwire sign` with an `ssh-keygen` key. Before:
the server read the signatures files once at start, so signing a folder it served changed nothing until
a restart; one book held every root's file keyed by URI, so a folder signed and then served under a
prefix lost every signature ("0 of N skills carry a publisher signature", no word why) while an
identical unprefixed copy served beside it picked them up.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from skillwire.catalog.signatures import SIGNATURES_FILE
from skillwire.core.entry import SkillEntry
from skillwire.core.signing import SIGNATURE_META_KEY, verify_entry
from support.calls import call, wait_for
from support.servers import serve_http

pytestmark = pytest.mark.skipif(shutil.which("ssh-keygen") is None, reason="OpenSSH's ssh-keygen is not installed")
SKILLWIRE = [sys.executable, "-m", "skillwire.cli.main"]


@pytest.fixture(scope="module")
def key(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    folder = tmp_path_factory.mktemp("keys")
    path = folder / "publisher"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "publisher", "-f", str(path)], check=True)
    return path, (folder / "publisher.pub").read_text().strip()


def _sign(spec: str, key: Path) -> str:
    done = subprocess.run([*SKILLWIRE, "sign", spec, "--key", str(key)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stderr


def _skills(root: Path, names: tuple[str, ...]) -> None:
    for name in names:
        (root / name).mkdir(parents=True)
        (root / name / "SKILL.md").write_text(f"---\nname: {name}\ndescription: Skill {name}.\n---\nBody of {name}.\n")
        (root / name / "notes.md").write_text(f"notes of {name}\n")


def _listed(url: str) -> dict[str, dict[str, Any]]:
    return {entry["uri"]: entry for entry in call(url, "skills/list")["skills"]}


def _signed(entry: dict[str, Any]) -> bool:
    return SIGNATURE_META_KEY in (entry.get("_meta") or {})


def _verifies(entry: dict[str, Any], public_line: str) -> bool:
    """The entry's signature verifies over the entry as served, by the publisher's key."""
    signer = verify_entry(SkillEntry.from_wire(entry))
    return signer.public_key == " ".join(public_line.split()[:2])


def test_signing_a_folder_while_it_is_served_is_live(tmp_path: Path, key: tuple[Path, str]) -> None:
    root = tmp_path / "skills"
    _skills(root, ("alpha", "beta"))
    with serve_http([str(root)]) as server:
        assert not any(_signed(e) for e in _listed(server.url).values())
        _sign(str(root), key[0])
        wait_for(lambda: all(_signed(e) for e in _listed(server.url).values()), 20, "the new signatures to be served")
        listed = _listed(server.url)
        assert all(_verifies(entry, key[1]) for entry in listed.values())
        # An edit unsigns the skill (named in the log), and a re-sign signs it again, both without a restart.
        (root / "beta" / "notes.md").write_text("changed notes\n")
        wait_for(lambda: not _signed(_listed(server.url)["skill://beta/SKILL.md"]), 20, "beta to be served unsigned")
        assert _signed(_listed(server.url)["skill://alpha/SKILL.md"])
        _sign(str(root), key[0])
        wait_for(lambda: _signed(_listed(server.url)["skill://beta/SKILL.md"]), 20, "beta to be signed again")
        assert _verifies(_listed(server.url)["skill://beta/SKILL.md"], key[1])
        assert "skill://beta/SKILL.md changed since it was signed" in server.log()


def test_signatures_stay_with_their_folder_under_a_prefix(tmp_path: Path, key: tuple[Path, str]) -> None:
    signed = tmp_path / "signed"
    copy = tmp_path / "copy"
    _skills(signed, ("alpha", "beta"))
    shutil.copytree(signed, copy)  # the same skills, byte for byte, never signed
    _sign(str(signed), key[0])
    with serve_http([f"{signed}=acme", str(copy)]) as server:
        listed = _listed(server.url)
        assert set(listed) == {
            "skill://acme/alpha/SKILL.md",
            "skill://acme/beta/SKILL.md",
            "skill://alpha/SKILL.md",
            "skill://beta/SKILL.md",
        }
        # The copy never carries the signed folder's signatures; the prefixed folder's are not where it is
        # served, and the start-up log says so in one line naming the fix.
        assert not any(_signed(e) for e in listed.values())
        said = [line for line in server.log().splitlines() if SIGNATURES_FILE in line]
        assert len(said) == 1, said
        assert "none under skill://acme/" in said[0]
        assert f"skillwire sign {signed}=acme" in said[0]

        # Signed where it is served: live, and only the prefixed folder's entries carry them.
        _sign(f"{signed}=acme", key[0])
        wait_for(lambda: _signed(_listed(server.url)["skill://acme/alpha/SKILL.md"]), 20, "the prefixed signatures")
        listed = _listed(server.url)
        assert _verifies(listed["skill://acme/alpha/SKILL.md"], key[1])
        assert _verifies(listed["skill://acme/beta/SKILL.md"], key[1])
        assert not _signed(listed["skill://alpha/SKILL.md"])
        assert not _signed(listed["skill://beta/SKILL.md"])
    # The file keeps both placements: served without the prefix, the folder is still signed.
    recorded = json.loads((signed / SIGNATURES_FILE).read_text())["signatures"]
    assert sorted(recorded) == [
        "skill://acme/alpha/SKILL.md",
        "skill://acme/beta/SKILL.md",
        "skill://alpha/SKILL.md",
        "skill://beta/SKILL.md",
    ]
    with serve_http([str(signed)]) as server:
        assert all(_verifies(e, key[1]) for e in _listed(server.url).values())
