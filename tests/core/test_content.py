"""`core/content.block_body`: the one reading of a `resources/read` content block (client and check)."""

from __future__ import annotations

import base64

import pytest

from skillwire.checks.audit.reads import _entry_difference
from skillwire.core.content import BadBlock, BlockBody, block_body


@pytest.mark.parametrize(
    ("text", "blob", "expected"),
    [
        ("héllo", None, BlockBody("héllo".encode(), True)),
        ("text wins", base64.b64encode(b"x").decode(), BlockBody(b"text wins", True)),
        (None, base64.b64encode(b"\x00\xff").decode(), BlockBody(b"\x00\xff", False)),
        ("", None, BlockBody(b"", True)),
        # A lone surrogate survives JSON decoding; encoding it used to raise UnicodeEncodeError in the client.
        ("bad \udcff", None, BadBlock.TEXT_NOT_UNICODE),
        (None, "not base64!", BadBlock.BLOB_NOT_BASE64),
        (None, "QQ", BadBlock.BLOB_NOT_BASE64),  # missing padding: strict base64 refuses it
        (None, None, BadBlock.NO_BODY),
        (3, 4, BadBlock.NO_BODY),  # neither field a string
    ],
)
def test_block_body(text: object, blob: object, expected: BlockBody | BadBlock) -> None:
    assert block_body(text, blob) == expected


def test_check_compares_listed_and_got_frontmatter_by_javascript_equality() -> None:
    # Python's `==` says 1 == True, so `skills/get` answering `true` where the listing had `1` went unreported.
    listed = {"uri": "skill://a/SKILL.md", "frontmatter": {"name": "a", "version": 1}, "resources": []}
    got = {**listed, "frontmatter": {"name": "a", "version": True}}
    assert _entry_difference(listed, got) == "frontmatter field(s) version differ"
    assert _entry_difference(listed, {**listed, "frontmatter": {"name": "a", "version": 1.0}}) == ""
