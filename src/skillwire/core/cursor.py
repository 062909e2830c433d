"""Opaque keyset cursors: `<base64url payload>.<mac>`.

A cursor says "continue after this key" for one kind of listing, so it stays meaningful when the
catalog changes between pages and any replica serving the same catalog (with the same secret) can
continue it: no server-side state. The MAC (HMAC-SHA256, truncated) makes a forged, truncated or
cross-listing cursor fail with `InvalidCursor` instead of silently listing from somewhere odd. It is
integrity, not secrecy: keys are URIs the client has already seen.

This is the one cursor codec in skillwire (`tests/test_protocol_owners.py` fails on another). A key is
a string (`skills/list`: the last URI of the page) or any JSON value a listing needs to continue
(`resources/list`: the phase and the key inside it; the model tools' `list_skills`: the browse position
or the query, offset and catalog version): `encode_cursor` takes either, `decode_cursor` gives back a
string key and refuses any other, `decode_cursor_value` gives back whatever JSON value was encoded for
the caller to check its shape.

`paginate` is the one keyset slice of a server's listings (`skills/list`, `resources/list`'s SKILL.md
pages, `resources/directory/read`): the page after a key over sorted keys, and the key the next page
continues after. `paginate_cursor` is the same behind a cursor of one kind.
"""

from __future__ import annotations

import base64
import binascii
import bisect
import hashlib
import hmac
import json
from collections.abc import Sequence

from skillwire.core.errors import InvalidCursor
from skillwire.core.json import JSONValue

DEFAULT_CURSOR_SECRET = b"skillwire/cursor/v1"
_MAC_BYTES = 12


def _mac(secret: bytes, kind: str, payload: bytes) -> str:
    digest = hmac.new(secret, kind.encode() + b"\0" + payload, hashlib.sha256).digest()[:_MAC_BYTES]
    return base64.urlsafe_b64encode(digest).decode().rstrip("=")


def encode_cursor(kind: str, key: JSONValue, *, secret: bytes = DEFAULT_CURSOR_SECRET) -> str:
    """A cursor continuing listing `kind` after `key` (a string, or any JSON value), MAC'd with `secret`."""
    payload = json.dumps([1, key], separators=(",", ":"), ensure_ascii=False).encode()
    body = base64.urlsafe_b64encode(payload).decode().rstrip("=")
    return f"{body}.{_mac(secret, kind, payload)}"


def decode_cursor(cursor: object, kind: str, *, secret: bytes = DEFAULT_CURSOR_SECRET) -> str:
    """The string key a cursor continues after; `InvalidCursor` for anything this listing did not issue."""
    key = decode_cursor_value(cursor, kind, secret=secret)
    if not isinstance(key, str):
        raise InvalidCursor(f"invalid cursor {cursor!r:.80}: unsupported version")
    return key


def decode_cursor_value(cursor: object, kind: str, *, secret: bytes = DEFAULT_CURSOR_SECRET) -> JSONValue:
    """The JSON key a cursor continues after (its shape is the caller's to check); `InvalidCursor` for
    anything this listing did not issue."""
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
    if version != 1:
        raise InvalidCursor(f"invalid cursor {cursor!r:.80}: unsupported version")
    return key  # type: ignore[no-any-return]  # json.loads of our own payload: a JSON value


def paginate(keys: Sequence[str], after: str | None, limit: int) -> tuple[range, str | None]:
    """The positions in sorted `keys` of the page of at most `limit` keys after `after` (from the start when
    None), and the key the next page continues after: the page's last, or None when nothing follows.

    Keyset, not offset: a key removed or added between two pages moves no other key into or out of the
    next page, and `after` need not be among `keys` (a skill that went away still continues the listing).
    """
    if limit < 1:
        raise ValueError(f"a page holds at least one item, not {limit}")
    start = 0 if after is None else bisect.bisect_right(keys, after)
    stop = min(start + limit, len(keys))
    return range(start, stop), (keys[stop - 1] if stop < len(keys) else None)


def paginate_cursor(
    keys: Sequence[str], cursor: str | None, limit: int, kind: str, *, secret: bytes = DEFAULT_CURSOR_SECRET
) -> tuple[range, str | None]:
    """`paginate` behind a cursor of listing `kind`: `InvalidCursor` for one this listing did not issue, and
    the cursor of the next page (None at the end)."""
    after = None if cursor is None else decode_cursor(cursor, kind, secret=secret)
    positions, last = paginate(keys, after, limit)
    return positions, (None if last is None else encode_cursor(kind, last, secret=secret))
