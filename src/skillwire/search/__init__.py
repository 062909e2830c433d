"""Ranked search over skills: one engine, used by the bridge's `list_skills(query)` (`host/`) and by the
server's `find_skills` tool (`server/`). It knows documents, not hosts or catalogs: each caller adapts its
own skills to `SearchDocument`s.

The public API (import from `skillwire.search`):

    index = SearchIndex(body_of=None, *, ranking=DEFAULT_RANKING, path=None, bodies_at_once=1000, cache_mb=64)
        body_of(document) -> str | None: the SKILL.md text the caller holds for a document (None: index it
        without a body). path: an SQLite file that outlives the process (or a callable giving one, asked
        at the first query); None: in memory.
    documents = DocumentSet(SearchDocument(uri, name, description, group="", qualified_name="", revision="",
                                           body=None), ...)
        Immutable. Hand the same object while the catalog is unchanged and a new one when it changes: the
        index then re-indexes only the documents whose name, description, group, qualified name or
        revision changed (revision: e.g. the SKILL.md digest; the body is re-read only then). body: the
        SKILL.md text when the caller holds it; None asks body_of.
    result = index.ranked(documents, query, limit=200, within=None)
        -> SearchResult(documents=[best first], total=matches counted (a long query's weak ones cut),
                        bodies_pending=documents ranked without their body so far)
        within: a collection of (group, uri) keys; only those count (a caller's own catalog).
    index.prepare(documents)          # build now (e.g. in a background thread) instead of at the first query
    index.note_body_known((group, uri))  # a body became readable: the next query indexes it
    index.wait_for_bodies(timeout)    # the background pass of a new large index is done
    index.close()
    query_words(text), content_words(text), MAX_QUERY_WORDS   # what a query's words are
    split_body(skill_md) -> BodyText(headings, prose); aliases_of(text)   # what a body contributes

Modules, one job each: `text` (query words, bodies, aliases; the frontmatter through
`core/skill_md.split_skill_md`), `store` (the SQLite FTS5 schema and writes), `rank` (`Ranking` and the
ranking of one query), `scores` (FTS5's bm25() computed from its own postings), `index` (`SearchIndex`:
following a document set, the background bodies). This package imports `core/` only. Its names are
imported from here, not from the package root: the engine is a layer of the library, not part of
`skillwire`'s own surface.
"""

from __future__ import annotations

from skillwire.search.index import BODIES_AT_ONCE as BODIES_AT_ONCE
from skillwire.search.index import DEFAULT_LIMIT as DEFAULT_LIMIT
from skillwire.search.index import BodySource as BodySource
from skillwire.search.index import DocumentSet as DocumentSet
from skillwire.search.index import Key as Key
from skillwire.search.index import SearchDocument as SearchDocument
from skillwire.search.index import SearchIndex as SearchIndex
from skillwire.search.index import SearchResult as SearchResult
from skillwire.search.rank import DEFAULT_RANKING as DEFAULT_RANKING
from skillwire.search.rank import Ranking as Ranking
from skillwire.search.store import INDEX_FORMAT as INDEX_FORMAT
from skillwire.search.text import BODY_CHARS as BODY_CHARS
from skillwire.search.text import MAX_QUERY_WORDS as MAX_QUERY_WORDS
from skillwire.search.text import STOPWORDS as STOPWORDS
from skillwire.search.text import BodyText as BodyText
from skillwire.search.text import aliases_of as aliases_of
from skillwire.search.text import content_words as content_words
from skillwire.search.text import query_words as query_words
from skillwire.search.text import split_body as split_body
