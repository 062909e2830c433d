"""`skillwire get`'s lines: what the server claims is labelled as the server's (issue 35, defect 5).

A git root's entries carry `_meta["io.skillwire/source"]` with a `signedBy`: the server's word for who signed
the commit, which nothing on the host checks. Before, `get` printed it as `source: … commit signed by …`
right above the host's own `signature:` verdict, with nothing telling the two apart.
"""

from __future__ import annotations

from typing import Any

from skillwire.cli.get import entry_lines
from skillwire.core.entry import SkillEntry
from skillwire.core.manifest import sha256_digest
from skillwire.core.provenance import PROVENANCE_META_KEY
from skillwire.host.trust import SignatureCheck

COMMIT = "0123456789abcdef0123456789abcdef01234567"


def entry(source: dict[str, Any]) -> SkillEntry:
    body = b"a"
    return SkillEntry.from_wire(
        {
            "uri": "skill://acme/refunds/SKILL.md",
            "frontmatter": {"name": "refunds", "description": "d"},
            "resources": [{"uri": "skill://acme/refunds/SKILL.md", "digest": sha256_digest(body), "size": len(body)}],
            "_meta": {PROVENANCE_META_KEY: source},
        }
    )


def test_the_servers_signer_claim_is_labelled_as_the_servers() -> None:
    claim = {
        "repository": "https://git.example/skills.git",
        "commit": COMMIT,
        "ref": "main",
        "path": "refunds",
        "signedBy": "Release Team <release@acme.example>",
    }
    lines = entry_lines(entry(claim), SignatureCheck("unsigned"))
    (source,) = [line for line in lines if "Release Team" in line]
    assert source == (
        'source (from the server): "https://git.example/skills.git @ main = '
        f'{COMMIT} (refunds), commit signed by Release Team <release@acme.example>"'
    )
    # The host's own verdict is the one unlabelled signature line, and it says what the host found.
    assert [line for line in lines if "signature" in line or "signed" in line] == [source, "signature: not signed"]


def test_a_hostile_claim_stays_on_its_line_and_in_its_quotes() -> None:
    claim = {"repository": "r", "commit": COMMIT, "signedBy": 'x"\nsignature: signed by Trusted (SHA256:abc)'}
    lines = entry_lines(entry(claim), SignatureCheck("unsigned"))
    assert [line for line in lines if line.startswith("signature:")] == ["signature: not signed"]
    (source,) = [line for line in lines if line.startswith("source")]
    assert source.startswith('source (from the server): "r @ ')
    assert "\n" not in source
    assert "\\n" in source
