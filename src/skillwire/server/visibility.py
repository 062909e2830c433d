"""Per-caller catalogs: who may see which skills, applied to every method by construction.

A caller's *audiences* come from its bearer token (the `mcp` SDK's own auth: a `TokenVerifier`
turns the token into an `AccessToken`, whose scopes are the audiences by default). Audience rules
map URI prefixes to the audiences that may see the skills under them; the longest matching prefix
decides, and a skill no rule covers is visible to everyone. A published catalog carries its rules
in its index (`skillwire publish --audience PREFIX=AUD,AUD`); embedders can add a Python predicate.

`PerCallerSkills` answers each request from a *view*: a `CatalogSnapshot` holding only the skills
the caller may see and only their files, built once per (snapshot, audience set) and kept in a small
LRU. Every method (skills/list and its cursors, skills/get, resources/read, resources/directory/read,
resources/list) then runs unchanged on that view, so a hidden skill is not filtered in five places
and possibly forgotten in a sixth: it is absent, and every answer is the one an unknown skill gets.
Results say `cacheScope: "private"`, because they depend on who asked.
"""

from __future__ import annotations

import bisect
import hmac
import json
import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from hashlib import sha256
from pathlib import Path
from typing import Any

from mcp.server.auth.middleware.auth_context import get_access_token
from mcp.server.auth.provider import AccessToken
from mcp.server.context import ServerRequestContext

from skillwire.catalog.audiences import AudienceRules, visible_to
from skillwire.catalog.catalog import SkillCatalog
from skillwire.catalog.indexed import IndexedSnapshot
from skillwire.catalog.snapshot import CatalogSkill, CatalogSnapshot
from skillwire.core.errors import InvalidAudienceRule
from skillwire.ops.logs import register_secret
from skillwire.server.extension import SkillsExtension

__all__ = ["PerCallerSkills"]

Visible = Callable[[CatalogSkill, frozenset[str]], bool]
_VIEWS_KEPT = 32


def view_of(snapshot: CatalogSnapshot, keep: Callable[[CatalogSkill], bool]) -> CatalogSnapshot:
    """The snapshot with only the skills `keep` accepts and only files a kept skill lists.

    A kept skill with a hidden skill nested inside it is shown without the hidden skill's files (and so
    unsigned: `CatalogSkill.without_files_under`): a folder skill's manifest lists every file below it,
    nested skills' too, and nothing under a hidden skill's root may reach a caller who cannot see it.
    """
    skills: list[CatalogSkill] = []
    hidden: list[str] = []
    for skill in snapshot.skill_by_uri.values():
        if keep(skill):
            skills.append(skill)
        else:
            hidden.append(skill.root_uri)
    if hidden:
        hidden.sort()  # bisect finds the hidden roots inside a kept skill's root
        skills = [shown_to_caller(skill, hidden) for skill in skills]
    wanted = {f.uri for s in skills for f in s.entry.files}
    files = [f for uri, f in snapshot.files.items() if uri in wanted]
    # No skip report in a view: where skipped folders were is not every caller's business.
    return CatalogSnapshot(skills, files, cursor_secret=snapshot.cursor_secret)


def hidden_inside(root: str, hidden_roots: Sequence[str]) -> list[str]:
    """The roots among sorted `hidden_roots` strictly inside skill root `root` (O(log n + found))."""
    below = root + "/"
    at = bisect.bisect_left(hidden_roots, below)
    found: list[str] = []
    while at < len(hidden_roots) and hidden_roots[at].startswith(below):
        found.append(hidden_roots[at])
        at += 1
    return found


def shown_to_caller(skill: CatalogSkill, hidden_roots: Sequence[str]) -> CatalogSkill:
    """`skill` as a caller who cannot see the skills at sorted `hidden_roots` is shown it."""
    inside = hidden_inside(skill.root_uri, hidden_roots)
    return skill.without_files_under(inside) if inside else skill


def token_audiences(token: AccessToken | None) -> frozenset[str]:
    """The default: a token's scopes are its audiences; no token, no audience."""
    return frozenset(token.scopes) if token is not None else frozenset()


def caller_token(ctx: ServerRequestContext[Any, Any]) -> AccessToken | None:
    token = get_access_token()
    if token is not None:
        return token
    request = getattr(ctx, "request", None)
    user = getattr(request, "scope", {}).get("user") if request is not None else None
    found = getattr(user, "access_token", None)
    return found if isinstance(found, AccessToken) else None


class PerCallerSkills(SkillsExtension):
    """`SkillsExtension` answering each caller from its own view of the catalog (see module docstring).

    `rules`: audience rules; None takes them from the snapshot (a published index declares them).
    `audiences_of`: the caller's audiences from its token. `visible`: an extra predicate, called once
    per skill per (snapshot, audience set) when a view is built, never per request.
    """

    per_caller = True

    def __init__(
        self,
        catalog: SkillCatalog | None = None,
        *,
        rules: AudienceRules | None = None,
        audiences_of: Callable[[AccessToken | None], frozenset[str]] = token_audiences,
        visible: Visible | None = None,
        **options: Any,
    ) -> None:
        options["cache_scope"] = "private"
        super().__init__(catalog, **options)
        self.rules = rules
        self.audiences_of = audiences_of
        self.visible = visible
        self._views: OrderedDict[tuple[int, frozenset[str]], tuple[CatalogSnapshot, CatalogSnapshot]] = OrderedDict()
        self._lock = threading.Lock()

    def snapshot_for(self, ctx: ServerRequestContext[Any, Any]) -> CatalogSnapshot:
        return self.snapshot_for_token(caller_token(ctx))

    def snapshot_for_token(self, token: AccessToken | None) -> CatalogSnapshot:
        """The view of the catalog for the caller holding `token`: every wire method's and the page's."""
        snapshot = self.catalog.snapshot
        audiences = self.audiences_of(token)
        key = (id(snapshot), audiences)
        with self._lock:
            kept = self._views.get(key)
            if kept is not None and kept[0] is snapshot:  # the snapshot is held, so its id is not reused
                self._views.move_to_end(key)
                return kept[1]
        rules = self.rules if self.rules is not None else getattr(snapshot, "audience_rules", ())
        extra = self.visible

        def keep(skill: CatalogSkill) -> bool:
            return visible_to(rules, skill.uri, audiences) and (extra is None or extra(skill, audiences))

        if isinstance(snapshot, IndexedSnapshot):
            # A subset of the index's records, not a copy of them; the hook alone needs a built skill.
            hook = None if extra is None else (lambda skill: extra(skill, audiences))
            view: CatalogSnapshot = snapshot.view(lambda uri: visible_to(rules, uri, audiences), hook)
        else:
            view = view_of(snapshot, keep)
        with self._lock:
            self._views[key] = (snapshot, view)
            while len(self._views) > _VIEWS_KEPT:
                self._views.popitem(last=False)
        return view


class StaticTokens:
    """A `TokenVerifier` over a JSON file of API tokens, for `skillwire serve --tokens FILE`:

        {"tokens": [{"client": "ci", "sha256": "<hex of the token>", "audiences": ["acme"]},
                    {"client": "dev", "token": "<the token itself>", "audiences": []}]}

    Prefer `sha256` (the file then holds no secret). Any other verifier (JWT, introspection) can be
    given to `build_server` instead; the audiences then come from its `AccessToken.scopes`.
    """

    def __init__(self, entries: Sequence[Mapping[str, Any]]) -> None:
        self._by_digest: dict[str, AccessToken] = {}
        where: dict[str, int] = {}
        for position, entry in enumerate(entries):
            client = entry.get("client")
            audiences = entry.get("audiences", [])
            digest = entry.get("sha256")
            if digest is None and isinstance(entry.get("token"), str):
                register_secret(entry["token"])  # a token written out in the file: never in a log line
                digest = sha256(entry["token"].encode()).hexdigest()
            if not isinstance(client, str) or not isinstance(digest, str) or len(digest) != 64:
                raise InvalidAudienceRule(f"tokens[{position}]: needs a 'client' and a 'token' or 'sha256'")
            if not isinstance(audiences, list) or not all(isinstance(a, str) for a in audiences):
                raise InvalidAudienceRule(f"tokens[{position}]: 'audiences' must be a list of strings")
            key = digest.lower()
            if key in where:
                # Which entry would answer (and with which audiences) must not depend on the file's order.
                first = where[key]
                raise InvalidAudienceRule(
                    f"tokens[{position}] ({client!r}) has the same token as tokens[{first}] "
                    f"({self._by_digest[key].client_id!r}); list each token once"
                )
            where[key] = position
            self._by_digest[key] = AccessToken(token="", client_id=client, scopes=list(audiences))

    @classmethod
    def from_file(cls, path: Path) -> StaticTokens:
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise InvalidAudienceRule(f"cannot read the tokens file {path}: {exc}") from None
        if not isinstance(data, dict) or not isinstance(data.get("tokens"), list):
            raise InvalidAudienceRule(f'{path}: expected {{"tokens": [...]}}')
        return cls(data["tokens"])

    async def verify_token(self, token: str) -> AccessToken | None:
        digest = sha256(token.encode()).hexdigest()
        for known, access in self._by_digest.items():
            if hmac.compare_digest(known, digest):
                return access.model_copy(update={"token": token})
        return None
