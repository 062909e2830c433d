"""Audience rules: which callers may see the skills under a URI prefix (see `server.visibility`).

The longest matching prefix decides; a skill no rule covers is visible to everyone. Rules live here,
beside the catalog, because a published index carries them (`skillwire publish --audience`).

A prefix is a scope in the one sense `core.uri.canonical_scope` / `in_scope` give it: canonical text
(`SKILL://secret` and `skill://%73ecret` are both `skill://secret`), matched when equal or followed
by `/`. Every rule is canonicalised where it enters (`--audience` on `serve` and `publish`, an index's
`audiences`, `audience_rules` in code), so a spelling can never make a rule that hides nothing.
"""

from __future__ import annotations

from collections.abc import Iterable

from skillwire.core.errors import InvalidAudienceRule, InvalidSkillURI
from skillwire.core.uri import canonical_scope, in_scope, is_absolute

AudienceRules = tuple[tuple[str, frozenset[str]], ...]  # (canonical URI prefix, audiences), longest prefix first


def audience_scope(prefix: str) -> str:
    """The canonical scope of an audience rule's prefix; `InvalidAudienceRule` naming why it is unusable."""
    try:
        return canonical_scope(prefix)
    except InvalidSkillURI as exc:
        raise InvalidAudienceRule(f"audience prefix {prefix!r} is not a URI prefix: {exc}") from None


def parse_audience_rule(text: str) -> tuple[str, frozenset[str]]:
    """`PREFIX=AUD[,AUD...]`, e.g. `skill://acme/billing=billing,finance`; the prefix canonicalised."""
    prefix, sep, names = text.partition("=")
    audiences = frozenset(n.strip() for n in names.split(",") if n.strip())
    if not sep or not is_absolute(prefix) or not audiences:
        raise InvalidAudienceRule(f"audience rule {text!r}: write PREFIX=AUD[,AUD...], e.g. skill://acme=acme")
    return audience_scope(prefix), audiences


def audience_rules(rules: Iterable[tuple[str, Iterable[str]]]) -> AudienceRules:
    """Rules in matching order (longest prefix first), each prefix canonical. Two rules for one prefix
    (however spelt) are refused: which of them decides would depend on the order they were written in."""
    seen: dict[str, str] = {}
    made: list[tuple[str, frozenset[str]]] = []
    for prefix, names in rules:
        scope = audience_scope(prefix)
        if scope in seen:
            raise InvalidAudienceRule(
                f"audience prefix {prefix!r} is {scope}, which {seen[scope]!r} already names; give each prefix one rule"
            )
        seen[scope] = prefix
        made.append((scope, frozenset(names)))
    return tuple(sorted(made, key=lambda rule: -len(rule[0])))


def visible_to(rules: AudienceRules, skill_uri: str, audiences: frozenset[str]) -> bool:
    """Whether a caller with `audiences` may see the skill at canonical `skill_uri`: the longest rule whose
    prefix covers it decides (`in_scope`: never a sibling such as `skill://acmesoft` for `skill://acme`)."""
    for prefix, allowed in rules:
        if in_scope(skill_uri, prefix):
            return not allowed.isdisjoint(audiences)
    return True
