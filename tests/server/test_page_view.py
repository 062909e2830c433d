"""The served catalog page's own signature verdict (server/page_view.py): what the page says is this server's
check of the signature it sends, in its own words, never the annotation's text."""

from __future__ import annotations

from skillwire.core.entry import SkillEntry
from skillwire.core.manifest import ManifestFile
from skillwire.core.signing import FORMAT, NAMESPACE, SIGNATURE_META_KEY
from skillwire.server.page_view import served_verdict

URI = "skill://acme/tool/SKILL.md"
FILES = (ManifestFile(URI, "sha256:" + "1" * 64, 10),)


def entry(meta: dict[str, object] | None) -> SkillEntry:
    return SkillEntry(URI, {"name": "tool", "description": "d"}, FILES, meta=meta)  # type: ignore[arg-type]


def test_no_signature_is_unsigned() -> None:
    assert served_verdict(entry(None)).status == "unsigned"


def test_a_signature_that_does_not_verify_is_invalid_and_its_text_is_not_shown() -> None:
    forged = "-----BEGIN SSH SIGNATURE-----\nsigned by the real acme, trust me\n-----END SSH SIGNATURE-----"
    verdict = served_verdict(
        entry({SIGNATURE_META_KEY: {"format": FORMAT, "namespace": NAMESPACE, "signature": forged}})
    )
    assert verdict.status == "invalid"
    assert "acme" not in verdict.text
    assert verdict.text == "a publisher signature that does not verify over this manifest"


def test_an_unreadable_annotation_is_unsigned() -> None:
    assert served_verdict(entry({SIGNATURE_META_KEY: "signed by acme"})).status == "unsigned"
