"""Audience rules: which callers may see the skills under a URI prefix (see `server.visibility`).

The longest matching prefix decides; a skill no rule covers is visible to everyone. Rules live here,
beside the catalog, because a published index carries them (`skillwire publish --audience`).
"""

from __future__ import annotations

from collections.abc import Iterable

from skillwire.core.errors import InvalidAudienceRule

AudienceRules = tuple[tuple[str, frozenset[str]], ...]  # (URI prefix, audiences), longest prefix first


def parse_audience_rule(text: str) -> tuple[str, frozenset[str]]:
    """`PREFIX=AUD[,AUD...]`, e.g. `skill://acme/billing=billing,finance`."""
    prefix, sep, names = text.partition("=")
    audiences = frozenset(n.strip() for n in names.split(",") if n.strip())
    if not sep or "://" not in prefix or not audiences:
        raise InvalidAudienceRule(f"audience rule {text!r}: write PREFIX=AUD[,AUD...], e.g. skill://acme=acme")
    return prefix.rstrip("/"), audiences


def audience_rules(rules: Iterable[tuple[str, Iterable[str]]]) -> AudienceRules:
    return tuple(sorted(((p.rstrip("/"), frozenset(a)) for p, a in rules), key=lambda r: -len(r[0])))


def visible_to(rules: AudienceRules, skill_uri: str, audiences: frozenset[str]) -> bool:
    for prefix, allowed in rules:
        # A prefix covers the URI equal to it and everything below it, never a sibling that merely
        # starts with the same letters (`skill://acme` does not cover `skill://acmesoft`).
        if skill_uri.startswith(prefix) and (len(skill_uri) == len(prefix) or skill_uri[len(prefix)] == "/"):
            return not allowed.isdisjoint(audiences)
    return True
