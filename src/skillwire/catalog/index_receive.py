"""Receiving a published index: its bytes streamed in, hashed on the way and held once.

`receive` is the one place an index's bytes arrive (`catalog/published.py` compares the hash with the id
its pointer names); nothing here reads a record.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable

from skillwire.core.errors import InvalidIndex


class ReceivedIndex:
    """An index as it arrived: its header line, the rest in one buffer, and the SHA-256 of the whole."""

    def __init__(self, header: bytes, rest: bytearray, sha256: str) -> None:
        self.header = header
        self.rest = rest
        self.sha256 = sha256


def receive(chunks: Iterable[bytes | memoryview], size: int) -> ReceivedIndex:
    """Hash and keep an index streamed in `chunks` (its `size` bytes announced by the store).

    The header line is collected on its own; everything after it goes into one buffer allocated once
    at its final size, so the index is held exactly once: reading it whole and then slicing it was
    two copies of 140 MB at the peak.
    """
    hasher = hashlib.sha256()
    head = bytearray()
    rest: bytearray | None = None
    filled = 0
    for chunk in chunks:
        data = chunk if isinstance(chunk, bytes) else bytes(chunk)
        hasher.update(data)
        view = memoryview(data)
        if rest is None:
            newline = data.find(b"\n")
            if newline < 0:
                head += data
                continue
            head += view[:newline]
            rest = bytearray(max(size - len(head) - 1, 0))
            view = view[newline + 1 :]
        if filled + len(view) > len(rest):
            raise InvalidIndex(f"the index is longer than the {size} bytes the store announced")
        rest[filled : filled + len(view)] = view
        filled += len(view)
    if rest is None:
        rest = bytearray()
    elif filled != len(rest):
        raise InvalidIndex(f"the index ended after {len(head) + 1 + filled} of the {size} bytes the store announced")
    return ReceivedIndex(bytes(head), rest, hasher.hexdigest())
