"""The bridge's search: the host's registry adapted to the search engine (`skillwire.search`).

`list_skills(query)` ranks the registry's skills with the one engine the server's `find_skills` tool uses
too (`search/`); this module only says what a registered skill is to it: a `SearchDocument` whose group
is its origin label, whose qualified name is its collision-free display name, and whose revision is its
kind and listed SKILL.md digest (the body stands behind the digest: it is only indexed once verified
against it, so an unchanged skill's body is never read again). The body comes from
`SkillHost.indexable_body` (local skills, and upstream ones whose SKILL.md is in the verified content
cache); nothing is fetched to index it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from skillwire.host.registry import RegisteredSkill, Registry
from skillwire.search import (
    BODIES_AT_ONCE,
    DEFAULT_LIMIT,
    DEFAULT_RANKING,
    DocumentSet,
    Ranking,
    SearchDocument,
    SearchIndex,
)

BodySource = Callable[[RegisteredSkill], str | None]


def document_of(skill: RegisteredSkill) -> SearchDocument:
    listed = skill.entry.file(skill.ref.uri)  # None for a dynamic skill
    digest = listed.digest if listed is not None else ""
    return SearchDocument(
        uri=skill.ref.uri,
        name=skill.name,
        description=skill.description,
        group=skill.ref.origin,
        qualified_name=skill.display_name,
        revision=f"{skill.kind}\x1f{digest}",
    )


@dataclass(frozen=True)
class SearchResult:
    """The first skills of a ranking, best first, and how many matched in all (`skillwire.search.SearchResult`
    in the registry's terms)."""

    skills: list[RegisteredSkill]
    total: int
    bodies_pending: int = 0


class SkillSearch:
    """`ranked(registry, query, limit=...)`: the registry's skills matching `query`, best first.

    `body_of`, when given, returns a skill's SKILL.md text if the host holds it verified (None when it
    does not); `note_body_known(origin, uri)` after a read makes the next query index it. `path`: the
    index file (or a callable giving it at the first query); None keeps it in memory.
    """

    def __init__(
        self,
        body_of: BodySource | None = None,
        *,
        ranking: Ranking = DEFAULT_RANKING,
        path: Path | Callable[[], Path | None] | None = None,
        bodies_at_once: int = BODIES_AT_ONCE,
    ) -> None:
        self._body_of = body_of
        self._skill_of: dict[tuple[str, str], RegisteredSkill] = {}
        self._documents: tuple[int, int, DocumentSet] | None = None  # (id(registry), version, its documents)
        self._registry: Registry | None = None  # held, so its id is not reused while it is followed
        self.index = SearchIndex(
            self._body if body_of is not None else None, ranking=ranking, path=path, bodies_at_once=bodies_at_once
        )

    @property
    def ranking(self) -> Ranking:
        return self.index.ranking

    @property
    def indexed(self) -> int:
        return self.index.indexed

    @property
    def bodies_indexed(self) -> int:
        return self.index.bodies_indexed

    @property
    def scored_by_sqlite(self) -> int:
        return self.index.scored_by_sqlite

    def _body(self, document: SearchDocument) -> str | None:
        skill = self._skill_of.get(document.key)
        if skill is None or self._body_of is None:
            return None
        return self._body_of(skill)

    def documents(self, registry: Registry) -> DocumentSet:
        """The registry as the engine's documents: one set per registry version (built when it changes)."""
        held = self._documents
        if held is not None and held[0] == id(registry) and held[1] == registry.version:
            return held[2]
        skills = list(registry)
        self._skill_of = {(skill.ref.origin, skill.ref.uri): skill for skill in skills}
        documents = DocumentSet(document_of(skill) for skill in skills)
        self._documents, self._registry = (id(registry), registry.version, documents), registry
        return documents

    def search(self, registry: Registry, query: str) -> list[RegisteredSkill]:
        """Every skill matching `query`, best first (a long query's weak matches cut); [] when it has no words."""
        return self.ranked(registry, query, limit=None).skills

    def ranked(self, registry: Registry, query: str, *, limit: int | None = DEFAULT_LIMIT) -> SearchResult:
        """The first `limit` skills matching `query` (None: all), best first, and how many matched in all."""
        documents = self.documents(registry)
        skill_of = self._skill_of
        result = self.index.ranked(documents, query, limit=limit)
        skills = [skill_of[document.key] for document in result.documents if document.key in skill_of]
        return SearchResult(skills, result.total, result.bodies_pending)

    def note_body_known(self, origin: str, uri: str) -> None:
        """A skill's SKILL.md was just read and verified: index its body from the next query on."""
        self.index.note_body_known((origin, uri))

    def wait_for_bodies(self, timeout: float | None = None) -> bool:
        return self.index.wait_for_bodies(timeout)

    def close(self) -> None:
        self.index.close()
