"""Which index records a published snapshot builds (catalog.index_records): the count that shows a replica
builds a skill from its line only when something asks for it."""

from __future__ import annotations

from typing import Any

import pytest

from skillwire.catalog.index_records import IndexRecords


def count_index_builds(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """From now on, every position `IndexRecords.build` parses is appended to the returned list."""
    built: list[int] = []
    real_build = IndexRecords.build

    def counting(self: IndexRecords, position: int) -> Any:
        built.append(position)
        return real_build(self, position)

    monkeypatch.setattr(IndexRecords, "build", counting)
    return built
