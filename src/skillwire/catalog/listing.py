"""Which skills a server lists: the operator's choice, the one owner of listed-or-not (issue 36 item 2).

A *listed* skill is in `skills/list` (and in `resources/list`'s SKILL.md pages); an *unlisted* one is served
all the same: `skills/get`, `resources/read`, directory reads and the search tool reach it by its address, as the
spec requires ("MUST answer for every skill it serves, whether or not that skill appears in its `skills/list`").
Native hosts read only the start of a listing (Claude Code: 100 skills, `core/host_limits.py`), so what is listed
is what a host shows its model; the rest is found by search and loaded by address.

Rules, in the order given (`--list GLOB` / `--unlist GLOB` on `serve` and `publish`, or `ListingRules` in code):
the **last** rule whose glob matches a skill decides. A skill no rule matches keeps its source's choice: folders
and git roots list every skill, a skill defined in code its `listed=`, a published index the flag its publisher
wrote (a replica applies no rules of its own: the flag travels in the index, so every replica lists alike).
`--unlist '**' --list 'core/**'` lists only what is under `core/`.

A glob is matched against a skill's root, as served (canonical, percent-encoded where the URI is):
- with `://`, against the root URI: `skill://acme/billing/**`;
- without, against the skill path after the scheme, in any scheme: `acme/billing/**`;
- a trailing `/SKILL.md` is ignored, so a skill's address may be written as it is loaded;
- `*` is any run of characters inside one segment, `?` one character, `[abc]` / `[!abc]` a class, and `**` as a
  whole segment any number of segments, none included (`acme/**` is `acme` and everything below it).

Listed-or-not is a property of the catalog's snapshot (`CatalogSkill.listed`, applied by `SkillCatalog` once per
snapshot); per-caller views (`server/visibility.py`) keep each visible skill's flag, so a caller's listing is
what it may see and what the operator lists, the one composed with the other, neither copied into the other.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from skillwire.core.errors import InvalidListingRule
from skillwire.core.uri import SKILL_MD, is_absolute, scheme_of

if TYPE_CHECKING:
    from skillwire.catalog.snapshot import CatalogSkill

__all__ = ["ListingRule", "ListingRules"]

_SKILL_MD_SUFFIX = "/" + SKILL_MD


def _translate(glob: str) -> str:
    """The regular expression a glob means (see the module docstring); matched whole."""
    out: list[str] = []
    i, n = 0, len(glob)
    while i < n:
        c = glob[i]
        at_segment_start = i == 0 or glob[i - 1] == "/"
        if c == "/" and glob[i:] == "/**":
            out.append("(?:/.*)?")  # `a/**`: `a` itself and everything below it
            break
        if c == "*" and glob.startswith("**", i) and at_segment_start:
            if i + 2 == n:
                out.append(".*")
                break
            if glob[i + 2] == "/":
                out.append("(?:[^/]+/)*")  # `**/x`: `x` at any depth, the top included
                i += 3
                continue
        if c == "*":
            while i + 1 < n and glob[i + 1] == "*":
                i += 1  # `a**b` inside a segment is `a*b`
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        elif c == "[" and (close := glob.find("]", i + 2)) != -1:
            body = glob[i + 1 : close]
            negate = body[0] in "!^"
            members = (body[1:] if negate else body).replace("/", "")  # a class never matches a segment's end
            escaped = re.escape(members).replace(r"\-", "-")
            out.append(("[^/" + escaped + "]") if negate else (f"[{escaped}]" if members else "(?!)"))
            i = close
        else:
            out.append(re.escape(c))
        i += 1
    return "".join(out)


@dataclass(frozen=True)
class ListingRule:
    """`--list GLOB` (`listed=True`) or `--unlist GLOB` (`listed=False`); see the module docstring."""

    listed: bool
    glob: str
    _pattern: re.Pattern[str] = field(init=False, repr=False, compare=False)
    _whole_uri: bool = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        glob = self.glob.strip()
        if glob.endswith(_SKILL_MD_SUFFIX):
            glob = glob[: -len(_SKILL_MD_SUFFIX)]
        flag = "--list" if self.listed else "--unlist"
        if not glob or glob.startswith("/"):
            raise InvalidListingRule(
                f"{flag} {self.glob!r}: write a skill path glob (acme/**) or a URI glob (skill://acme/**)"
            )
        object.__setattr__(self, "_whole_uri", is_absolute(glob))
        object.__setattr__(self, "_pattern", re.compile(_translate(glob), re.DOTALL))

    def matches(self, root_uri: str) -> bool:
        """Whether this rule's glob covers the skill at canonical root URI `root_uri`."""
        text = root_uri if self._whole_uri else root_uri[len(scheme_of(root_uri)) + 3 :]
        return self._pattern.fullmatch(text) is not None

    def describe(self) -> str:
        return f"{'--list' if self.listed else '--unlist'} {self.glob}"


@dataclass(frozen=True)
class ListingRules:
    """The operator's rules, in order; the last that matches a skill decides (see the module docstring).

    `SkillCatalog(listing=ListingRules([ListingRule(False, "**"), ListingRule(True, "core/**")]))` lists only
    the skills under `core/`; every other skill is served unlisted.
    """

    rules: Sequence[ListingRule] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "rules", tuple(self.rules))

    @classmethod
    def parse(cls, flags: Iterable[tuple[str, str]]) -> ListingRules:
        """From `("list" | "unlist", GLOB)` pairs in command-line order (`InvalidListingRule` for a bad one)."""
        made: list[ListingRule] = []
        for action, glob in flags:
            if action not in ("list", "unlist"):
                raise InvalidListingRule(f"a listing rule is 'list' or 'unlist', not {action!r}")
            made.append(ListingRule(action == "list", glob))
        return cls(made)

    def __bool__(self) -> bool:
        return bool(self.rules)

    def listed(self, root_uri: str, default: bool) -> bool:
        """Whether the skill at canonical root URI `root_uri` is listed; `default` (its source's choice) when no
        rule matches."""
        for rule in reversed(self.rules):
            if rule.matches(root_uri):
                return rule.listed
        return default

    def apply(self, skills: Sequence[CatalogSkill]) -> Sequence[CatalogSkill]:
        """`skills` with each one's flag decided by these rules; the same objects where nothing changes (and the
        same sequence when there are no rules), so incremental refreshes keep sharing them."""
        if not self.rules:
            return skills
        decided: list[CatalogSkill] = []
        for skill in skills:
            listed = self.listed(skill.root_uri, skill.listed)
            decided.append(skill if listed == skill.listed else replace(skill, listed=listed))
        return decided
