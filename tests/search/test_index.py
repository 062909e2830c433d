"""The engine on plain documents (`skillwire.search`): bodies given or provided, a set followed by identity and
revision, rankings restricted to a caller's rows, and a build ahead of the first query."""

from __future__ import annotations

from pathlib import Path

from skillwire.search import DocumentSet, SearchDocument, SearchIndex


def doc(name: str, description: str, body: str | None = None, revision: str = "1") -> SearchDocument:
    return SearchDocument(f"skill://{name}/SKILL.md", name, description, revision=revision, body=body)


def names(result_documents: list[SearchDocument]) -> list[str]:
    return [d.name for d in result_documents]


def test_a_given_body_and_a_provided_body_index_alike() -> None:
    body = "---\nname: forms\ndescription: x\n---\n# Filling\n\nStamp the acroform fields.\n"
    given = SearchIndex()
    provided = SearchIndex(lambda d: body)
    assert given.ranked(DocumentSet([doc("forms", "PDF work.", body)]), "acroform").total == 1
    assert provided.ranked(DocumentSet([doc("forms", "PDF work.")]), "acroform").total == 1
    assert SearchIndex().ranked(DocumentSet([doc("forms", "PDF work.")]), "acroform").total == 0  # no body at all


def test_a_set_is_followed_by_identity_and_a_row_remade_only_when_its_revision_changes() -> None:
    reads: list[str] = []

    def body_of(document: SearchDocument) -> str:
        reads.append(document.name)
        return f"# {document.name}\n\nrevision {document.revision} talks about kilns.\n"

    index = SearchIndex(body_of)
    first = DocumentSet([doc("a", "One."), doc("b", "Two.")])
    assert index.ranked(first, "kilns").total == 2
    assert index.ranked(first, "kilns").total == 2
    assert sorted(reads) == ["a", "b"]
    index.ranked(DocumentSet([doc("a", "One."), doc("b", "Two.", revision="2")]), "kilns")
    assert sorted(reads) == ["a", "b", "b"]  # only the changed row was made again
    assert index.indexed == 3


def test_within_leaves_other_rows_out_of_the_answer_the_total_and_the_exact_name_rule() -> None:
    documents = DocumentSet(
        [doc("glaze", "Glaze pottery."), doc("kiln", "Fire a kiln for pottery."), doc("x", "Other.")]
    )
    index = SearchIndex()
    assert index.ranked(documents, "pottery").total == 2
    only = frozenset({("", "skill://glaze/SKILL.md"), ("", "skill://x/SKILL.md")})
    found = index.ranked(documents, "pottery", within=only)
    assert (names(found.documents), found.total) == (["glaze"], 1)
    assert index.ranked(documents, "kiln", within=only).total == 0  # its exact name does not bring it back
    assert index.ranked(documents, "kiln", within=frozenset()).documents == []


def test_prepare_builds_the_index_a_later_query_uses(tmp_path: Path) -> None:
    documents = DocumentSet([doc(f"s{i}", f"Skill {i} about kilns.") for i in range(30)])
    index = SearchIndex(path=tmp_path / "search.sqlite")
    assert index.prepare(documents) == 0
    assert index.indexed == 30
    assert index.ranked(documents, "kilns", limit=5).total == 30
    assert index.indexed == 30  # nothing made again
    assert index.on_disk


def test_callers_taking_turns_each_get_their_own_rows() -> None:
    documents = DocumentSet([doc(f"s{i}", f"Skill {i} about kilns.") for i in range(12)])
    index = SearchIndex()
    evens = frozenset(("", f"skill://s{i}/SKILL.md") for i in range(0, 12, 2))
    firsts = frozenset(("", f"skill://s{i}/SKILL.md") for i in range(3))
    for _ in range(3):
        assert sorted(names(index.ranked(documents, "kilns", within=evens).documents)) == sorted(
            f"s{i}" for i in range(0, 12, 2)
        )
        assert index.ranked(documents, "kilns", within=firsts).total == 3
    changed = DocumentSet([*documents, doc("s12", "Skill 12 about kilns.")])
    assert index.ranked(changed, "kilns", within=firsts).total == 3  # rows renumbered: resolved again
    assert index.ranked(changed, "kilns").total == 13


WORDS = ["deploy", "invoice", "schema", "render", "audit", "billing", "cluster", "lint", "diagram", "ticket"]


def catalog_documents(count: int) -> list[SearchDocument]:
    made = []
    for i in range(count):
        body = f"# {WORDS[i % 10]} steps\n\nUse it for {WORDS[(i * 3) % 10]} and {WORDS[(i * 7) % 10]}.\n" * (1 + i % 5)
        made.append(doc(f"s{i:03d}", f"Helps with {WORDS[(i * 11) % 10]} for team {i % 7}.", body, revision=str(i)))
    return made


def test_a_callers_ranking_is_what_an_index_of_only_its_rows_gives() -> None:
    """With `within`, rows outside change nothing: not the order, not the total, not the cut-off (each word's
    IDF and the average length are the caller's rows' own), so a hidden skill cannot be inferred from them."""
    everything = catalog_documents(120)
    mine = [d for i, d in enumerate(everything) if i % 3 != 0]
    keys = frozenset(d.key for d in mine)
    whole, alone = SearchIndex(), SearchIndex()
    queries = ["render the invoice diagram", "audit the cluster billing before every deploy of the schema", "lint"]
    for query in [*queries, "ticket team", "s005", "deploy"]:
        got = whole.ranked(DocumentSet(everything), query, limit=None, within=keys)
        want = alone.ranked(DocumentSet(mine), query, limit=None)
        assert (names(got.documents), got.total) == (names(want.documents), want.total), query


def test_hidden_rows_sharing_a_word_do_not_lower_its_weight_for_a_caller() -> None:
    visible = [doc("a-first", "alpha alpha alpha."), doc("b-second", "beta beta beta.")]
    hidden = [doc(f"h{i}", f"alpha notes {i}.") for i in range(6)]  # make "alpha" common in the whole index
    keys = frozenset(d.key for d in visible)
    whole = SearchIndex()
    assert names(whole.ranked(DocumentSet([*visible, *hidden]), "alpha beta").documents)[0] == "b-second"
    found = whole.ranked(DocumentSet([*visible, *hidden]), "alpha beta", within=keys)
    alone = SearchIndex().ranked(DocumentSet(visible), "alpha beta")
    assert names(found.documents) == names(alone.documents) == ["a-first", "b-second"]  # a tie, then rowid
