"""Which skill a name or URI written by a person means (`get`, `cat`, `pull` and `pull --for HOST` take the same).

A URI is a skill's `SKILL.md` URI or its root; a bare name must be the name of exactly one listed skill (a name
several skills share is refused with their URIs, never guessed). A miss is answered with the closest listed
names or skill paths (`difflib`, cutoff 0.75). The command line words a bad URI and an ambiguous name as usage
errors (`cli/resolve.py`); everything here is the rule.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Iterable

from skillwire.client.skills import SkillsClient
from skillwire.core.display import escape
from skillwire.core.entry import SkillEntry
from skillwire.core.errors import AmbiguousName, SkillNotFound
from skillwire.core.uri import SKILL_MD, SkillPath, is_absolute, parse_uri, scheme_of


def skill_md_uri(text: str) -> str:
    """The SKILL.md URI for a skill URI (`.../SKILL.md` or the skill root); `InvalidSkillURI` when it is neither."""
    parsed = parse_uri(text)
    uri = text if parsed.segments[-1] == SKILL_MD else text + "/" + SKILL_MD
    SkillPath.from_skill_md_uri(uri)
    return uri


def did_you_mean(wanted: str, candidates: Iterable[str], *, strip: Callable[[str], str] = str) -> str:
    """`; did you mean 'pdf-processing'?` for the closest few candidates, or "" when none is close.

    `strip` maps each text to the part worth comparing (a URI's skill path, not its shared
    `skill://` and `/SKILL.md`), so a common prefix does not make everything look close.
    """
    by_key: dict[str, str] = {}
    for candidate in sorted(set(candidates)):
        by_key.setdefault(strip(candidate), candidate)
    close = difflib.get_close_matches(strip(wanted), list(by_key), n=3, cutoff=0.75)
    if not close:
        return ""
    return "; did you mean " + " or ".join(repr(escape(by_key[key])) for key in close) + "?"


def _skill_path_of(uri: str) -> str:
    text = uri.removesuffix("/" + SKILL_MD)
    scheme = scheme_of(text)
    return text[len(scheme) + 3 :] if scheme else text


async def resolve_entry(client: SkillsClient, ref: str) -> SkillEntry:
    """The entry for a URI (via `skills/get`) or for a bare name (via the listing; exactly one match).

    A skill that is not found is answered with the closest listed names (or URIs), when any is close;
    `AmbiguousName` when several listed skills have the name.
    """
    if is_absolute(ref):
        uri = skill_md_uri(ref)
        try:
            return await client.get_skill(uri)
        except SkillNotFound as exc:
            # Only now is the listing fetched: a hit costs one skills/get.
            listing = await client.list_skills()
            hint = did_you_mean(uri, (entry.uri for entry in listing.entries), strip=_skill_path_of)
            if not hint:
                raise
            better = SkillNotFound(str(exc) + hint)
            better.code, better.origin = exc.code, exc.origin
            raise better from None
    listing = await client.list_skills()
    matches = [entry for entry in listing.entries if entry.name == ref]
    if len(matches) > 1:
        uris = [entry.uri for entry in matches]
        shown = ", ".join(escape(uri) for uri in uris)
        raise AmbiguousName(
            f"{len(uris)} skills are named {escape(ref)!r}: {shown}; give the URI of the one you mean",
            name=ref,
            uris=uris,
        )
    if not matches:
        hint = did_you_mean(ref, (entry.name for entry in listing.entries))
        raise SkillNotFound(
            f"no listed skill is named {escape(ref)!r}" + (hint or " (a listing may be partial: give the skill's URI)"),
            origin=client.origin,
        )
    return matches[0]
