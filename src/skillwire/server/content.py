"""How a skill file becomes `resources/read` contents: text for UTF-8, base64 blob otherwise."""

from __future__ import annotations

import base64
from typing import Any

from skillwire.catalog.mime import guess_mime_type, is_utf8_text
from skillwire.catalog.snapshot import CatalogFile
from skillwire.core.uri import SKILL_MD


def _contents(uri: str, mime_type: str, data: bytes, is_text: bool) -> dict[str, Any]:
    if is_text:
        # Decoding with plain "utf-8" keeps a BOM as U+FEFF, so the client's re-encoding yields the
        # exact bytes that were hashed.
        return {"uri": uri, "mimeType": mime_type, "text": data.decode("utf-8")}
    return {"uri": uri, "mimeType": mime_type, "blob": base64.b64encode(data).decode("ascii")}


def file_contents(file: CatalogFile, data: bytes) -> dict[str, Any]:
    return _contents(file.uri, file.mime_type, data, file.is_text)


def dynamic_contents(uri: str, file_path: str, data: bytes) -> dict[str, Any]:
    name = file_path.rsplit("/", 1)[-1]
    text = is_utf8_text(data)
    mime = "text/markdown" if name == SKILL_MD else guess_mime_type(name, is_text=text)
    return _contents(uri, mime, data, text)
