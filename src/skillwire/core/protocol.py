"""The protocol's vocabulary: everything both sides of SEP-2640 spell the same way lives here.

The extension id, the method names, the MIME type of a directory, the `_meta` keys and prefixes (the
spec's and skillwire's own), and the shapes of the params the client sends and the server reads. The
server (`server/`), the client (`client/`) and the checks (`checks/`) import these names; none of them
writes the strings itself, so a rename in the spec is one edit (`tests/test_rule_owners.py` fails on a
second definition). The numeric limits are `core/manifest.py`'s (`MAX_FILES_PER_SKILL`,
`MAX_BYTES_PER_SKILL`), re-exported here so a reader finds every protocol constant in one place.

Pure data: no `mcp` import. The pydantic params models the SDK needs to bind a method are
`core/params.py`, the one `core` module that may import the wire types package (`mcp_types`).
"""

from __future__ import annotations

from typing import Final, Literal, TypedDict

from skillwire.core.manifest import MAX_BYTES_PER_SKILL, MAX_FILES_PER_SKILL

__all__ = [
    "DIRECTORY_MIME_TYPE",
    "DIRECTORY_READ_SETTING",
    "EXTENSION_ID",
    "INDEX_META_KEY",
    "MAX_BYTES_PER_SKILL",
    "MAX_FILES_PER_SKILL",
    "METHOD_GET",
    "METHOD_LIST",
    "METHOD_READ_DIRECTORY",
    "METHOD_RESOURCES_LIST",
    "METHOD_RESOURCES_READ",
    "SKILLWIRE_META_PREFIX",
    "SPEC_META_PREFIX",
]

# The extension's identifier, in `capabilities.extensions` (server) and per-request client capabilities.
EXTENSION_ID: Final = "io.modelcontextprotocol/skills"
# The one setting of the extension's capability object: `{"directoryRead": true}`.
DIRECTORY_READ_SETTING: Final = "directoryRead"

# Methods the extension adds, and the core methods it serves skill files through.
METHOD_LIST: Final = "skills/list"
METHOD_GET: Final = "skills/get"
METHOD_READ_DIRECTORY: Final = "resources/directory/read"
METHOD_RESOURCES_READ: Final = "resources/read"
METHOD_RESOURCES_LIST: Final = "resources/list"
# The same names as types, for request models whose `method` field is a literal (pydantic and mypy need
# a `Literal` there; the values above are those literals).
ListMethod = Literal["skills/list"]
GetMethod = Literal["skills/get"]
ReadDirectoryMethod = Literal["resources/directory/read"]

# `mimeType` of a directory child in `resources/directory/read`.
DIRECTORY_MIME_TYPE: Final = "inode/directory"

# `_meta` keys: the spec's own prefix (frontmatter fields a resource carries), and skillwire's, under
# which everything skillwire adds to an entry lives (signatures, provenance) so no other party's key
# is ever shadowed.
SPEC_META_PREFIX: Final = "io.modelcontextprotocol.skills/"
SKILLWIRE_META_PREFIX: Final = "io.skillwire/"
# In a `skills/list` result's own `_meta` (not an entry's), when the server answers from a published
# index (`skillwire serve s3://...`): `{"id": "<the index's SHA-256>", "sequence": N}`, so a client can
# refuse to go back to an older index (core/published_index.py reads it, `skillwire pull` applies it).
INDEX_META_KEY: Final = SKILLWIRE_META_PREFIX + "index"


class GetSkillParamsShape(TypedDict):
    """`skills/get` params as JSON: `{"uri": "<scheme>://<skill-path>/SKILL.md"}`."""

    uri: str


class ReadDirectoryParamsShape(TypedDict, total=False):
    """`resources/directory/read` params as JSON: a directory URI and an optional cursor."""

    uri: str
    cursor: str
