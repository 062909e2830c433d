"""A skill's files fetched verified from one server, for what writes them out (`cat`, the mirror behind `pull`).

Only bytes that are the listed file (its size, then its digest: `core/verify.py`) are returned; a
SKILL.md must also match its entry's frontmatter field by field. A terminal may quote the served
words in the mismatch, so `quote=True` here (the host, whose errors can reach a model, does not).
"""

from __future__ import annotations

from skillwire.client.skills import SkillsClient
from skillwire.core import verify
from skillwire.core.entry import SkillEntry
from skillwire.core.errors import UnlistedFile
from skillwire.core.manifest import ManifestFile


async def fetch_verified(client: SkillsClient, listed: ManifestFile) -> bytes:
    """`resources/read` of a listed file; its bytes only when their length and digest match the manifest."""
    return verify.verify_file(listed, (await client.read_skill_uri(listed.uri, size=listed.size)).data)


def verify_skill_md(entry: SkillEntry, data: bytes) -> None:
    """The served SKILL.md's frontmatter must equal the entry's, field by field (`FrontmatterMismatch`)."""
    verify.verify_skill_md(entry.uri, entry.frontmatter, data, quote=True)  # a terminal may quote the served words


async def fetch_skill_md(client: SkillsClient, entry: SkillEntry) -> bytes:
    """SKILL.md of a (non-dynamic) entry: size, digest, then frontmatter field by field."""
    listed = entry.file(entry.uri)
    if listed is None:  # `SkillEntry.from_wire` guarantees it is listed
        raise UnlistedFile(entry.uri, entry.uri)
    data = await fetch_verified(client, listed)
    verify_skill_md(entry, data)
    return data
