"""A hidden skill nested inside a visible one (issue 19, defect 1): nothing under the hidden root leaks.

`pub/` holds `pub/inner/`, and `--audience skill://pub/inner=team` hides the inner skill. A folder
skill's manifest lists every file below it, the nested skill's too, so a caller without `team` used
to get `skill://pub/inner/SKILL.md` and `notes.md` with their digests in `pub`'s manifest, and their
bytes from `resources/read`. The rule now: that caller is shown `pub` without those files, and unsigned
(its publisher's statement covers them). Checked for a folder catalog and for a published index
(`file://` store, the same `IndexedSnapshot` `serve s3://` uses), through the real SDK in memory, in
every method, by walking everything the caller can reach and by asking for the hidden URIs in several
spellings, each answered exactly as a path that never existed.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp.client import Client
from mcp.shared.exceptions import MCPError
from mcp_types.jsonrpc import INVALID_PARAMS

from skillwire.catalog.audiences import audience_rules
from skillwire.catalog.catalog import SkillCatalog
from skillwire.catalog.digests import DigestCache
from skillwire.catalog.published import PublishedCatalog, publish
from skillwire.catalog.signatures import SignatureBook
from skillwire.catalog.store import parse_location
from skillwire.core.manifest import sha256_digest
from skillwire.core.signing import SIGNATURE_META_KEY, Signature, statement_digest
from skillwire.server.app import build_server
from skillwire.server.visibility import PerCallerSkills
from support.calls import send

INNER_NOTES = b"the inner notes: only the team may read this\n"
INNER_MD = b"---\nname: inner\ndescription: The team's inner skill.\n---\nInner body.\n"
RULES = audience_rules([("skill://pub/inner", ["team"])])
PLACEHOLDER = (
    "-----BEGIN SSH SIGNATURE-----\nplaceholder: the server only matches statements\n-----END SSH SIGNATURE-----\n"
)

# (method, a hidden URI in some spelling, the same spelling of a path that never existed)
HIDDEN_ASKS = [
    ("skills/get", "skill://pub/inner/SKILL.md", "skill://pub/nothing/SKILL.md"),
    ("skills/get", "skill://pub/%69nner/SKILL.md", "skill://pub/%6Eothing/SKILL.md"),
    ("skills/get", "SKILL://pub/inner/SKILL.md", "SKILL://pub/nothing/SKILL.md"),
    ("resources/read", "skill://pub/inner/SKILL.md", "skill://pub/nothing/SKILL.md"),
    ("resources/read", "skill://pub/inner/notes.md", "skill://pub/nothing/notes.md"),
    ("resources/read", "skill://pub/%69nner/notes.md", "skill://pub/%6Eothing/notes.md"),
    ("resources/read", "skill://pub/inner/%6Eotes.md", "skill://pub/nothing/%6Eotes.md"),
    ("resources/read", "SKILL://pub/inner/notes.md", "SKILL://pub/nothing/notes.md"),
    ("resources/read", "skill://pub/inner/./notes.md", "skill://pub/nothing/./notes.md"),
    ("resources/directory/read", "skill://pub/inner", "skill://pub/nothing"),
    ("resources/directory/read", "skill://pub/%69nner", "skill://pub/%6Eothing"),
    ("resources/directory/read", "SKILL://pub/inner", "SKILL://pub/nothing"),
]


def make_tree(root: Path) -> None:
    (root / "pub" / "inner").mkdir(parents=True)
    (root / "pub" / "SKILL.md").write_text("---\nname: pub\ndescription: The public skill.\n---\nSee guide.md.\n")
    (root / "pub" / "guide.md").write_text("the public guide\n")
    (root / "pub" / "inner" / "SKILL.md").write_bytes(INNER_MD)
    (root / "pub" / "inner" / "notes.md").write_bytes(INNER_NOTES)
    (root / "open").mkdir()
    (root / "open" / "SKILL.md").write_text("---\nname: open\ndescription: Another public skill.\n---\nOpen.\n")


def signed_book(catalog: SkillCatalog) -> SignatureBook:
    """A signature record for every skill, matched by statement as `skillwire sign` writes them."""
    book = SignatureBook()
    for skill in catalog.snapshot.skill_by_uri.values():
        book.records[skill.uri] = (statement_digest(skill.entry), Signature(PLACEHOLDER))
    return book


Serving = Callable[[frozenset[str]], PerCallerSkills]


def folder_serving(tmp_path: Path) -> Serving:
    make_tree(tmp_path / "skills")
    catalog = SkillCatalog([tmp_path / "skills"], digest_cache=DigestCache())
    book = signed_book(catalog)
    return lambda audiences: PerCallerSkills(catalog, rules=RULES, audiences_of=lambda _: audiences, signatures=book)


def index_serving(tmp_path: Path) -> Serving:
    make_tree(tmp_path / "skills")
    source = SkillCatalog([tmp_path / "skills"], digest_cache=DigestCache())
    location = parse_location(f"file://{tmp_path / 'store'}")
    anyio.run(lambda: publish(source.snapshot, location, audiences=RULES, signatures=signed_book(source)))
    catalog = PublishedCatalog(str(location), poll_seconds=0)  # the rules come from the index
    return lambda audiences: PerCallerSkills(catalog, audiences_of=lambda _: audiences)


@pytest.fixture(scope="module", params=["folder", "index"])
def serving(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Serving:
    folder = tmp_path_factory.mktemp(request.param)
    made: Serving = (folder_serving if request.param == "folder" else index_serving)(folder)
    return made


async def with_client(skills: PerCallerSkills, body: Callable[[Client], Awaitable[Any]]) -> Any:
    async with Client(build_server(skills)) as client:
        return await body(client)


async def everything_reachable(client: Client) -> list[Any]:
    """Every answer a caller can get without knowing a URI: listings, each entry, every directory below
    the catalog's top-level directories, every file they name, and resources/list."""
    answers: list[Any] = []
    cursor = None
    entries = []
    while True:
        page = await send(client, "skills/list", {"cursor": cursor} if cursor else None)
        answers.append(page)
        entries += page["skills"]
        cursor = page.get("nextCursor")
        if not cursor:
            break
    files: set[str] = set()
    for entry in entries:
        got = await send(client, "skills/get", {"uri": entry["uri"]})
        answers.append(got)
        files.update(r["uri"] for r in got["skill"]["resources"])
    directories = ["skill://pub", "skill://open"]
    while directories:
        listing = await send(client, "resources/directory/read", {"uri": directories.pop()})
        answers.append(listing)
        for child in listing["resources"]:
            if child.get("mimeType") == "inode/directory":
                directories.append(child["uri"])
            else:
                files.add(child["uri"])
    for uri in sorted(files):
        answers.append(await send(client, "resources/read", {"uri": uri}))
    answers.append(await send(client, "resources/list"))
    return answers


async def error_of(client: Client, method: str, uri: str) -> tuple[int, str, Any]:
    try:
        await send(client, method, {"uri": uri})
    except MCPError as exc:
        return exc.error.code, exc.error.message, exc.error.data
    raise AssertionError(f"{method} {uri} answered; it should be unknown to this caller")


def test_nothing_under_a_hidden_nested_skill_reaches_a_caller_who_cannot_see_it(serving: Serving) -> None:
    outsider = anyio.run(with_client, serving(frozenset({"someone-else"})), everything_reachable)
    text = json.dumps(outsider)
    assert "skill://pub/SKILL.md" in text
    assert "the public guide" in text
    assert "inner" not in text  # no URI, name, directory or byte of the hidden skill
    for secret in (INNER_NOTES, INNER_MD):
        assert sha256_digest(secret) not in text  # no digest
    pub = next(a["skill"] for a in outsider if "skill" in a and a["skill"]["uri"] == "skill://pub/SKILL.md")
    assert {r["uri"] for r in pub["resources"]} == {"skill://pub/SKILL.md", "skill://pub/guide.md"}
    # Its publisher's statement covers the hidden files: shown without them, it is shown unsigned.
    assert SIGNATURE_META_KEY not in (pub.get("_meta") or {})
    opened = next(a["skill"] for a in outsider if "skill" in a and a["skill"]["uri"] == "skill://open/SKILL.md")
    assert SIGNATURE_META_KEY in opened["_meta"]  # a skill with nothing hidden inside keeps its signature


def test_the_team_sees_the_parent_whole_and_signed(serving: Serving) -> None:
    insider = anyio.run(with_client, serving(frozenset({"team"})), everything_reachable)
    pub = next(a["skill"] for a in insider if "skill" in a and a["skill"]["uri"] == "skill://pub/SKILL.md")
    assert {r["uri"] for r in pub["resources"]} == {
        "skill://pub/SKILL.md",
        "skill://pub/guide.md",
        "skill://pub/inner/SKILL.md",
        "skill://pub/inner/notes.md",
    }
    assert SIGNATURE_META_KEY in pub["_meta"]
    assert "the inner notes" in json.dumps(insider)


@pytest.mark.parametrize(("method", "hidden", "missing"), HIDDEN_ASKS)
def test_each_spelling_of_a_hidden_nested_uri_answers_as_a_path_that_never_existed(
    serving: Serving, method: str, hidden: str, missing: str
) -> None:
    async def both(client: Client) -> tuple[tuple[int, str, Any], tuple[int, str, Any]]:
        return await error_of(client, method, hidden), await error_of(client, method, missing)

    hidden_answer, missing_answer = anyio.run(with_client, serving(frozenset()), both)
    assert hidden_answer[0] == INVALID_PARAMS
    code, message, data = hidden_answer
    as_missing = (code, message.replace(hidden, missing), data if data != hidden else missing)
    if isinstance(data, dict) and data.get("uri") == hidden:
        as_missing = (code, as_missing[1], {**data, "uri": missing})
    assert as_missing == missing_answer
