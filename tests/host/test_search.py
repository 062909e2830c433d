"""The ranked search behind `list_skills(query=...)`: real SQLite FTS5, BM25, stemming, prefixes, rebuilds."""

from __future__ import annotations

import time

import pytest

from skillwire.core.entry import SkillEntry
from skillwire.core.manifest import ManifestFile
from skillwire.host.registry import RegisteredSkill, Registry
from skillwire.host.search import SkillSearch
from skillwire.search import MAX_QUERY_WORDS, query_words

DIGEST = "sha256:" + "0" * 64


def entry(name: str, description: str, group: str = "") -> SkillEntry:
    path = f"{group}/{name}" if group else name
    uri = f"skill://{path}/SKILL.md"
    return SkillEntry(uri, {"name": name, "description": description}, (ManifestFile(uri, DIGEST, 10),))


def names(found: list[RegisteredSkill]) -> list[str]:
    return [s.name for s in found]


@pytest.fixture
def registry() -> Registry:
    registry = Registry()
    registry.set_origin(
        "work",
        "mcp",
        [
            entry("pdf-forms", "Fill in PDF forms from structured data."),
            entry("deploy-service", "Deployment of services to a cluster, with rollbacks."),
            entry("refunds", "Process customer refunds.", "billing"),
            entry("refunds", "Legal review of refund disputes.", "legal"),
            entry("café-menus", "Écrire les menus du café."),
        ],
    )
    registry.set_origin("home", "mcp", [entry("pdf-forms", "Personal PDF paperwork.")])
    return registry


def test_words_name_and_description_rank_with_stemming_and_prefixes(registry: Registry) -> None:
    search = SkillSearch()
    assert names(search.search(registry, "deploying"))[0] == "deploy-service"  # porter: deploying ~ deployment
    assert names(search.search(registry, "rollback"))[0] == "deploy-service"  # a description word
    assert names(search.search(registry, "deplo"))[0] == "deploy-service"  # a prefix
    assert names(search.search(registry, "cafe"))[0] == "café-menus"  # diacritics folded
    both = search.search(registry, "pdf forms")
    assert {(s.ref.origin, s.name) for s in both[:2]} == {("work", "pdf-forms"), ("home", "pdf-forms")}
    # A name hit outranks a description hit; an exact (qualified) name comes first.
    assert search.search(registry, "home/pdf-forms")[0].ref.origin == "home"
    refunds = search.search(registry, "refund")
    assert {s.display_name for s in refunds} == {"work/billing/refunds", "work/legal/refunds"}
    assert search.search(registry, "nothing-like-this") == []


@pytest.mark.parametrize(
    "query", ['"', "NEAR(a b)", "a AND OR NOT", "name:pdf", "*", "^pdf", "(((", "pdf\x00forms", "'; DROP TABLE skills"]
)
def test_fts_syntax_in_a_query_is_just_words(registry: Registry, query: str) -> None:
    found = SkillSearch().search(registry, query)  # never an FTS5 syntax error
    assert isinstance(found, list)


def test_query_words_are_bounded() -> None:
    assert query_words("PDF, pdf; forms!") == ["pdf", "forms"]
    assert query_words("-- ** ::") == []
    assert len(query_words(" ".join(f"w{i}" for i in range(500)))) == MAX_QUERY_WORDS


def test_the_index_follows_the_registry(registry: Registry) -> None:
    search = SkillSearch()
    assert search.search(registry, "zymurgy") == []
    before = registry.version
    registry.set_origin("home", "mcp", [entry("pdf-forms", "Personal PDF paperwork.")])  # the same listing
    assert registry.version == before  # no change, no rebuild
    registry.set_origin("home", "mcp", [entry("brewing", "Keeps a zymurgy log.")])
    assert registry.version > before
    assert names(search.search(registry, "zymurgy")) == ["brewing"]
    assert names(search.search(registry, "paperwork")) == []
    registry.remove_origin("home")
    assert search.search(registry, "zymurgy") == []


def test_ten_thousand_skills_one_description_word_first() -> None:
    registry = Registry()
    entries = [
        entry(f"skill-{i:05d}", f"Generated skill {i} for team {i % 50}; use it when measuring.") for i in range(10_000)
    ]
    entries.insert(4321, entry("kiln-schedule", "Plan firing schedules for a ceramics kiln."))
    registry.set_origin("big", "mcp", entries)
    search = SkillSearch()
    started = time.perf_counter()
    found = search.search(registry, "ceramics")
    first = time.perf_counter() - started
    assert names(found) == ["kiln-schedule"]
    assert names(search.search(registry, "firing kiln measuring")[:1]) == ["kiln-schedule"]
    assert first < 5.0  # the index build over 10,001 skills (about 0.15 s here); generous for a loaded machine
