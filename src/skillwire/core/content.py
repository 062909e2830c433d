"""What one `resources/read` content block means: its bytes, or why it has none.

SEP-2640 serves a file as one content block for its URI, `text` (UTF-8) or `blob` (base64). Both the
client (`client/skills.py`, which hands bytes to verification) and `skillwire check`
(`checks/audit/reads.py`, which reports on them) take a block's bytes through `block_body`, so the two
agree on what a valid block is: `text` wins when both are present, a `blob` must be strict base64, and
a `text` that cannot be encoded as UTF-8 (a lone surrogate after JSON decoding) is refused, not raised.
"""

from __future__ import annotations

import base64
import binascii
from dataclasses import dataclass
from enum import Enum


@dataclass(frozen=True)
class BlockBody:
    """The bytes a content block carries, and whether they came as `text`."""

    data: bytes
    is_text: bool


class BadBlock(Enum):
    """Why a content block yields no bytes; the value is the reason in words."""

    TEXT_NOT_UNICODE = "a text that is not valid Unicode"
    BLOB_NOT_BASE64 = "a blob that is not base64"
    NO_BODY = "neither text nor blob"


def block_body(text: object, blob: object) -> BlockBody | BadBlock:
    """The bytes of a block whose `text` and `blob` fields are given (None, or whatever was sent)."""
    if isinstance(text, str):
        try:
            return BlockBody(text.encode("utf-8"), True)
        except UnicodeEncodeError:
            return BadBlock.TEXT_NOT_UNICODE
    if isinstance(blob, str):
        try:
            return BlockBody(base64.b64decode(blob, validate=True), False)
        except (binascii.Error, ValueError):
            return BadBlock.BLOB_NOT_BASE64
    return BadBlock.NO_BODY
