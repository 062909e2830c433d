"""skillwire: the MCP Skills extension (SEP-2640, `io.modelcontextprotocol/skills`) for Python.

from skillwire import SkillCatalog, SkillsExtension

skills = SkillsExtension(SkillCatalog(["./skills"]))
skills.attach(mcp)      # any mcp MCPServer or low-level Server
"""

from __future__ import annotations

__version__ = "0.1.0"

from skillwire.catalog.catalog import SkillCatalog
from skillwire.catalog.filesystem import SkillRoot
from skillwire.core.entry import SkillEntry
from skillwire.core.errors import (
    DigestMismatch,
    FrontmatterError,
    FrontmatterMismatch,
    InvalidCursor,
    InvalidEntry,
    InvalidName,
    InvalidSkillURI,
    LimitExceeded,
    NotASkill,
    SizeMismatch,
    SkillChanged,
    SkillError,
    SkillwireError,
    UnlistedFile,
    VerificationFailed,
)
from skillwire.core.manifest import ManifestFile
from skillwire.server.extension import EXTENSION_ID, SkillsExtension

__all__ = [
    "EXTENSION_ID",
    "DigestMismatch",
    "FrontmatterError",
    "FrontmatterMismatch",
    "InvalidCursor",
    "InvalidEntry",
    "InvalidName",
    "InvalidSkillURI",
    "LimitExceeded",
    "ManifestFile",
    "NotASkill",
    "SizeMismatch",
    "SkillCatalog",
    "SkillChanged",
    "SkillEntry",
    "SkillError",
    "SkillRoot",
    "SkillsExtension",
    "SkillwireError",
    "UnlistedFile",
    "VerificationFailed",
    "__version__",
]
