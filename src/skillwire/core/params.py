"""The params models of the extension's methods, written once for both sides.

The server binds `skills/get` and `resources/directory/read` with these (`server/extension.py`), and the
client sends them (`client/requests.py`). They subclass the wire types package's `RequestParams`, so
`_meta` (per-request client capabilities, progress tokens) travels as the SDK expects. This is the one
`core` module that imports `mcp_types`, the SDK's pure pydantic wire types (no I/O, no session, no
transport); `tests/test_import_graph.py` keeps every other `core` module free of it.
"""

from __future__ import annotations

from mcp_types import PaginatedRequestParams, RequestParams


class GetSkillParams(RequestParams):
    """`skills/get`: the skill's `SKILL.md` URI."""

    uri: str


class ReadDirectoryParams(PaginatedRequestParams):
    """`resources/directory/read`: a directory URI inside a skill (or a prefix), with a cursor."""

    uri: str
