"""The miss classes of issue 21, each on a small catalog where main's ranking (name and description only,
no stopwords, every word prefix-matched) put the wanted skill below its neighbours."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import jsonschema

from skillwire.core.entry import SkillEntry
from skillwire.core.manifest import ManifestFile
from skillwire.host.host import SkillHost
from skillwire.host.registry import RegisteredSkill, Registry
from skillwire.host.search import SkillSearch
from skillwire.host.tool_listing import BODIES_PENDING_NOTE, LISTING_NOTICE, SkillListing
from skillwire.host.tool_schemas import LIST_SKILLS_OUTPUT_SCHEMA
from skillwire.host.tools import SkillTools
from skillwire.search import aliases_of, content_words, split_body

DIGEST = "sha256:" + "0" * 64


def catalog(skills: list[tuple[str, str, str]]) -> tuple[Registry, SkillSearch]:
    """A registry of (name, description, SKILL.md body) and a search that knows the bodies."""
    registry = Registry()
    bodies: dict[str, str] = {}
    entries = []
    for name, description, body in skills:
        uri = f"skill://{name}/SKILL.md"
        entries.append(SkillEntry(uri, {"name": name, "description": description}, (ManifestFile(uri, DIGEST, 10),)))
        bodies[uri] = f"---\nname: {name}\ndescription: {description}\n---\n{body}"
    registry.set_origin("work", "mcp", entries)

    def body_of(skill: RegisteredSkill) -> str | None:
        return bodies.get(skill.ref.uri)

    return registry, SkillSearch(body_of)


def first(search: SkillSearch, registry: Registry, query: str) -> str:
    found = search.search(registry, query)
    assert found, f"nothing found for {query!r}"
    return found[0].name


def test_words_only_in_the_body_find_the_skill() -> None:
    registry, search = catalog(
        [
            (
                "slack-format",
                "Format Slack messages.",
                "# Formatting\n\n## Headers and lists\n\nUse *bold* for headers, bullet lists for steps, and a code "
                "block for commands. Good for incident updates posted to the team channel.\n",
            ),
            ("release-notes", "Write release notes with headers and lists for a product update.", "# Notes\n"),
            ("status-page", "Post an incident update to the public status page.", "# Status\n"),
        ]
    )
    task = "format this incident update for our team chat with bold headers, bullet lists and a code block"
    assert first(search, registry, task) == "slack-format"


def test_common_words_do_not_drown_the_key_word_of_a_long_task() -> None:
    registry, search = catalog(
        [
            ("generate-image", "Generate images using AI: pictures, illustrations and artwork.", "# Images\n"),
            ("brand-voice", "Create content for our newsletter in our brand's voice, for our audience.", "# Voice\n"),
            ("content-creation", "Content creation for newsletters and blogs, in every format, for any forecast.", ""),
            ("forum-digest", "Format a forum digest for our community at the end of each week.", ""),
        ]
    )
    task = "Create an illustration of a lighthouse at dusk for our newsletter header"
    assert first(search, registry, task) == "generate-image"
    assert content_words(task)[:2] == ["create", "illustration"]  # "an", "of", "a", "at", "for", "our" dropped


def test_an_acronym_the_skill_defines_finds_it_by_its_expansion() -> None:
    registry, search = catalog(
        [
            (
                "prd",
                "Write a PRD / feature spec for a new feature.",
                "# Writing a Product Requirements Document (PRD)\n\nStart from the problem.\n",
            ),
            ("design-doc", "Write a technical design document and review requirements.", "# Design\n"),
            ("nda-review", "Triage an NDA.", "An NDA (non-disclosure agreement) is screened for risky clauses.\n"),
            ("contract-draft", "Draft a supplier agreement or contract.", "# Contracts\n"),
        ]
    )
    assert first(search, registry, "product requirements document") == "prd"
    assert first(search, registry, "screen a non-disclosure agreement") == "nda-review"
    assert "PRD Product Requirements Document" in aliases_of("a Product Requirements Document (PRD) is")
    assert "NDA non disclosure agreement" in aliases_of("An NDA (non-disclosure agreement) is")


def test_a_general_skill_is_not_beaten_by_neighbours_repeating_the_task_words() -> None:
    registry, search = catalog(
        [
            (
                "scikit-learn",
                "Machine learning in Python with scikit-learn.",
                "# Training models\n\n## Classifiers\n\nTrain a random forest or logistic regression classifier on "
                "tabular data, tune it with cross-validation and grid search, and evaluate it.\n",
            ),
            ("shap", "Explain model predictions with SHAP values for random forest and boosted models.", "# SHAP\n"),
            ("scikit-survival", "Survival analysis models with cross-validation of a random survival forest.", ""),
        ]
    )
    task = "train a random forest classifier with cross-validation on my tabular data"
    assert first(search, registry, task) == "scikit-learn"


def test_a_task_length_query_reports_a_few_matches_not_the_whole_catalog() -> None:
    filler = [(f"skill-{i:02d}", f"Create and update reports for the team, item {i}.", "") for i in range(60)]
    registry, search = catalog(
        [*filler, ("kiln-schedule", "Plan firing schedules for a ceramics kiln.", "# Kiln\n\nCone by cone.\n")]
    )
    found = search.search(registry, "please create a firing schedule for the ceramics kiln in our studio for the team")
    assert found[0].name == "kiln-schedule"
    assert len(found) < 20  # main returned all 61: every skill shares "create", "for", "the", "team"


def test_the_body_is_cut_and_its_code_and_frontmatter_left_out() -> None:
    text = "---\nname: x\ndescription: y\n---\n# Title\n\nprose words\n```\nsecret_identifier\n```\n" + "z " * 9000
    body = split_body(text)
    assert body.headings == "Title"
    assert "secret_identifier" not in body.prose
    assert "description" not in body.prose
    assert len(body.prose) <= 6000


def test_the_untrusted_notice_is_in_list_skills_structured_content(tmp_path: Path) -> None:
    """pydantic-ai and openai-agents pass a model only `structuredContent`: the notice must be there too,
    and a local skill's body is indexed through the host (a word only its body has finds it)."""
    folder = tmp_path / "skills" / "slack-format"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(
        "---\nname: slack-format\ndescription: Format Slack messages.\n---\n# Incident updates\n\nUse bold headers.\n"
    )

    async def run() -> dict[str, Any]:
        async with SkillHost() as host:
            host.add_local("local", [tmp_path / "skills"])
            tools = SkillTools(host)
            result = await tools.call("list_skills", {"query": "incident update"})
            assert not result.is_error, result.text
            assert result.structured is not None
            browse = await tools.call("list_skills", {})
            assert browse.structured is not None
            assert browse.structured["notice"] == result.structured["notice"]
            return result.structured

    structured = anyio.run(run)
    assert [s["name"] for s in structured["skills"]] == ["slack-format"]
    assert "untrusted" in structured["notice"]
    jsonschema.validate(structured, LIST_SKILLS_OUTPUT_SCHEMA)


def test_list_skills_says_when_the_search_index_is_still_adding_bodies(tmp_path: Path) -> None:
    """A query answered before the background pass gave every skill its body says so, in the text and in the
    structured notice; once the pass is done it does not, and the skill only its body names is found."""
    for i in range(3):
        folder = tmp_path / "skills" / f"skill-{i}"
        folder.mkdir(parents=True)
        body = "Fire the kiln slowly." if i == 2 else "Bake bread."
        (folder / "SKILL.md").write_text(f"---\nname: skill-{i}\ndescription: Helps with ovens.\n---\n{body}\n")

    async def run() -> None:
        async with SkillHost(use_cache=False) as host:
            host.add_local("local", [tmp_path / "skills"])
            search = SkillSearch(host.indexable_body, bodies_at_once=2)  # 3 new rows > 2: bodies afterwards
            listing = SkillListing(host, search, page_size=50)
            text, structured = await listing.list_skills({"query": "ovens kiln"})
            pending = BODIES_PENDING_NOTE.format(pending=3)
            assert pending in text
            assert structured["notice"] == f"{LISTING_NOTICE} {pending}"
            jsonschema.validate(structured, LIST_SKILLS_OUTPUT_SCHEMA)
            assert search.wait_for_bodies(timeout=60)
            text, structured = await listing.list_skills({"query": "ovens kiln"})
            assert "still adding" not in text
            assert structured["notice"] == LISTING_NOTICE
            assert structured["skills"][0]["name"] == "skill-2"
            search.close()

    anyio.run(run)


def test_a_long_body_does_not_bury_the_skill_whose_description_says_it() -> None:
    """FTS5's bm25() divides a row's matches by the whole row's length: with name, description and body in
    one row, a skill with a thorough body lost its own description's words to a neighbour with a short
    body that says less. Names and bodies are scored apart, each normalised by its own length."""
    thorough = "## Steps\n\n" + "Open the document, check each page, keep a copy of the original, then save it. " * 40
    filler = [(f"team-{i}", f"Run the weekly chores of team {i}.", "Keep notes of the meeting.\n") for i in range(8)]
    registry, search = catalog(
        [
            *filler,
            ("pdf-signing", "Fill in PDF forms and sign them.", thorough),
            ("pdf-toolbox", "Edit PDF files: fill forms, merge, split and compress them.", "Merge PDF files.\n"),
        ]
    )
    assert first(search, registry, "fill in this pdf form and sign it") == "pdf-signing"
    assert first(search, registry, "I have to fill in the tax pdf form and sign it before friday") == "pdf-signing"
