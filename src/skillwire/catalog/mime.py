"""MIME types of skill files, decided once at scan time and the same on every machine.

The platform's `/etc/mime.types` differs between machines, so only Python's built-in table plus the
overrides below are used. Text vs blob is decided by the bytes (UTF-8 without NUL is text), not by
the extension: a `.png` that is valid UTF-8 is still served with its image type, as text.
"""

from __future__ import annotations

import functools
import mimetypes

_BUILTIN = mimetypes.MimeTypes(filenames=())
_OVERRIDES = {
    ".md": "text/markdown",
    ".markdown": "text/markdown",
    ".py": "text/x-python",
    ".sh": "text/x-shellscript",
    ".bash": "text/x-shellscript",
    ".ps1": "text/plain",
    ".js": "text/javascript",
    ".mjs": "text/javascript",
    ".ts": "text/plain",
    ".yaml": "application/yaml",
    ".yml": "application/yaml",
    ".toml": "application/toml",
    ".json": "application/json",
    ".txt": "text/plain",
    ".csv": "text/csv",
    ".svg": "image/svg+xml",
    ".xsd": "application/xml",
    ".xml": "application/xml",
}


def guess_mime_type(file_name: str, *, is_text: bool) -> str:
    dot = file_name.rfind(".")
    return _mime_for_extension(file_name[dot:].lower() if dot > 0 else "", is_text)


@functools.lru_cache(maxsize=1024)
def _mime_for_extension(ext: str, is_text: bool) -> str:
    # Cached: a catalog has a handful of extensions and `mimetypes` parses a URL per call.
    mime = _OVERRIDES.get(ext) or _BUILTIN.guess_type("x" + ext, strict=False)[0]
    if mime:
        return mime
    return "text/plain" if is_text else "application/octet-stream"


def is_utf8_text(data: bytes) -> bool:
    if b"\0" in data:
        return False
    if data.isascii():
        return True  # checked in C without building a str: most skill files are plain ASCII
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True
