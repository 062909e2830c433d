"""Opaque keyset cursors: `<base64url payload>.<mac>`.

A cursor says "continue after this key" for one kind of listing, so it stays meaningful when the
catalog changes between pages and any replica serving the same catalog (with the same secret) can
continue it: no server-side state. The MAC (HMAC-SHA256, truncated) makes a forged, truncated or
cross-listing cursor fail with `InvalidCursor` instead of silently listing from somewhere odd. It is
integrity, not secrecy: keys are URIs the client has already seen.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json

from skillwire.core.errors import InvalidCursor

DEFAULT_CURSOR_SECRET = b"skillwire/cursor/v1"
_MAC_BYTES = 12


def _mac(secret: bytes, kind: str, payload: bytes) -> str:
    digest = hmac.new(secret, kind.encode() + b"\0" + payload, hashlib.sha256).digest()[:_MAC_BYTES]
    return base64.urlsafe_b64encode(digest).decode().rstrip("=")


def encode_cursor(kind: str, key: str, *, secret: bytes = DEFAULT_CURSOR_SECRET) -> str:
    payload = json.dumps([1, key], separators=(",", ":"), ensure_ascii=False).encode()
    body = base64.urlsafe_b64encode(payload).decode().rstrip("=")
    return f"{body}.{_mac(secret, kind, payload)}"


def decode_cursor(cursor: object, kind: str, *, secret: bytes = DEFAULT_CURSOR_SECRET) -> str:
    """The key a cursor continues after; `InvalidCursor` for anything this listing did not issue."""
    # ASCII only: hmac.compare_digest raises TypeError on non-ASCII str.
    if not isinstance(cursor, str) or len(cursor) > 4096 or not cursor.isascii() or cursor.count(".") != 1:
        raise InvalidCursor(f"invalid cursor {cursor!r:.80}: not issued by this server")
    body, mac = cursor.split(".")
    try:
        payload = base64.urlsafe_b64decode(body + "=" * (-len(body) % 4))
    except (binascii.Error, ValueError):
        raise InvalidCursor(f"invalid cursor {cursor!r:.80}: not issued by this server") from None
    if base64.urlsafe_b64encode(payload).decode().rstrip("=") != body:
        # Unused trailing bits would let several texts decode to one payload: only the exact text we issue.
        raise InvalidCursor(f"invalid cursor {cursor!r:.80}: not issued by this server")
    if not hmac.compare_digest(mac, _mac(secret, kind, payload)):
        raise InvalidCursor(f"invalid cursor {cursor!r:.80}: not issued by this server for this listing")
    try:
        version, key = json.loads(payload)
    except (ValueError, TypeError):
        raise InvalidCursor(f"invalid cursor {cursor!r:.80}: unreadable payload") from None
    if version != 1 or not isinstance(key, str):
        raise InvalidCursor(f"invalid cursor {cursor!r:.80}: unsupported version")
    return key
