"""Per-caller catalogs: bearer tokens (the `mcp` SDK's auth) and index-declared audiences.

A catalog published with `--audience skill://acme/secret=secret-team` is served from SeaweedFS with
`--tokens FILE`. A caller whose token lacks the audience gets, for every method and every URI form
of a hidden skill, exactly the answer a skill that does not exist gets; a caller with it sees all;
no token gets 401. A Python predicate (`visible=`) narrows views in-process the same way.
"""

from __future__ import annotations

import hashlib
import json
import secrets
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp.client import Client
from mcp_types.jsonrpc import INVALID_PARAMS

from skillwire.catalog.audiences import audience_rules, visible_to
from skillwire.catalog.catalog import SkillCatalog
from skillwire.catalog.digests import DigestCache
from skillwire.server.app import build_server
from skillwire.server.visibility import PerCallerSkills
from support import skills
from support.calls import RawRequest, RawResult, call, call_error, list_uris
from support.cli import run_cli
from support.seaweed import SeaweedS3
from support.servers import RunningServer, serve_http

INSIDER = "insider-" + secrets.token_hex(8)
OUTSIDER = "outsider-" + secrets.token_hex(8)
HIDDEN = "skill://acme/secret/plans/SKILL.md"
MISSING = "skill://acme/secret/nothing-here/SKILL.md"  # never existed: the answers to copy


def sha256_hex(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def make_skill(folder: Path, name: str, extra: dict[str, str] | None = None) -> None:
    skills.write_skill(folder.parent, folder.name, extra, name=name, description=f"The {name} skill.", body="Body.\n")


@pytest.fixture(scope="module")
def guarded(seaweedfs: SeaweedS3, tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    root = tmp_path_factory.mktemp("visibility") / "skills"
    make_skill(root / "acme" / "billing" / "refunds", "refunds")
    make_skill(root / "acme" / "secret" / "plans", "plans", {"docs/roadmap.md": "the roadmap\n"})
    make_skill(root / "open" / "hello", "hello")
    prefix = "visibility-" + secrets.token_hex(4)
    published = run_cli(
        "publish", str(root), seaweedfs.url(prefix), "--audience", "skill://acme/secret=secret-team", env=seaweedfs.env
    )
    assert published.code == 0, published.err
    tokens = root.parent / "tokens.json"
    tokens.write_text(
        json.dumps(
            {
                "tokens": [
                    {"client": "insider", "sha256": sha256_hex(INSIDER), "audiences": ["secret-team"]},
                    {"client": "outsider", "token": OUTSIDER, "audiences": ["someone-else"]},
                ]
            }
        )
    )
    args = [seaweedfs.url(prefix), "--tokens", str(tokens), "--page-size", "1", "--no-watch"]
    with serve_http(args, env=seaweedfs.env) as server:
        yield server


def error_of(server: RunningServer, method: str, params: dict[str, Any], token: str) -> tuple[int, str, Any]:
    error = call_error(server.url, method, params, token=token).error
    return error.code, error.message, error.data


def test_no_token_is_refused_with_401(guarded: RunningServer) -> None:
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "skills/list", "params": {}}).encode()
    # No token, then a token nobody issued: both refused before any method runs.
    for extra in ({}, {"Authorization": "Bearer not-a-token"}):
        headers = {"Content-Type": "application/json", "Accept": "application/json", **extra}
        request = urllib.request.Request(guarded.url, data=body, headers=headers)
        with pytest.raises(urllib.error.HTTPError) as info:
            urllib.request.urlopen(request, timeout=5)
        assert info.value.code == 401
        assert "Bearer" in info.value.headers.get("WWW-Authenticate", "")


def test_two_tokens_see_different_listings(guarded: RunningServer) -> None:
    insider = list_uris(guarded.url, token=INSIDER)
    outsider = list_uris(guarded.url, token=OUTSIDER)
    assert insider == ["skill://acme/billing/refunds/SKILL.md", HIDDEN, "skill://open/hello/SKILL.md"]
    assert outsider == ["skill://acme/billing/refunds/SKILL.md", "skill://open/hello/SKILL.md"]
    page = call(guarded.url, "skills/list", token=OUTSIDER)
    assert page["cacheScope"] == "private"
    entry = call(guarded.url, "skills/get", {"uri": HIDDEN}, token=INSIDER)
    assert entry["cacheScope"] == "private"
    assert {r["uri"] for r in entry["skill"]["resources"]} == {HIDDEN, "skill://acme/secret/plans/docs/roadmap.md"}
    read = call(guarded.url, "resources/read", {"uri": HIDDEN}, token=INSIDER)
    assert read["contents"][0]["text"].endswith("Body.\n")


def as_missing(answer: tuple[int, str, Any], hidden: str, missing: str) -> tuple[int, str, Any]:
    code, message, data = answer
    if isinstance(data, dict) and data.get("uri") == hidden:
        data = {**data, "uri": missing}
    return code, message.replace(hidden, missing), data


@pytest.mark.parametrize(
    ("method", "hidden", "missing"),
    [
        ("skills/get", HIDDEN, MISSING),
        ("skills/get", "skill://acme/%73ecret/plans/SKILL.md", "skill://acme/%73ecret/nothing-here/SKILL.md"),
        ("resources/read", HIDDEN, MISSING),
        ("resources/read", "skill://acme/secret/plans/docs/roadmap.md", "skill://acme/secret/nothing-here/docs/x.md"),
        (
            "resources/read",
            "skill://acme/secret/plans/docs/../SKILL.md",
            "skill://acme/secret/nothing-here/../SKILL.md",
        ),
        ("resources/directory/read", "skill://acme/secret/plans", "skill://acme/secret/nothing-here"),
        ("resources/directory/read", "skill://acme/secret/plans/docs", "skill://acme/secret/nothing-here/docs"),
        ("resources/directory/read", "skill://acme/secret", "skill://acme/nothing-here"),
    ],
)
def test_every_form_of_a_hidden_skill_answers_as_if_absent(
    guarded: RunningServer, method: str, hidden: str, missing: str
) -> None:
    hidden_answer = error_of(guarded, method, {"uri": hidden}, OUTSIDER)
    missing_answer = error_of(guarded, method, {"uri": missing}, OUTSIDER)
    assert hidden_answer[0] == INVALID_PARAMS
    assert as_missing(hidden_answer, hidden, missing) == missing_answer


def test_directories_and_resources_list_do_not_reveal_it(guarded: RunningServer) -> None:
    outsider = call(guarded.url, "resources/directory/read", {"uri": "skill://acme"}, token=OUTSIDER)
    insider = call(guarded.url, "resources/directory/read", {"uri": "skill://acme"}, token=INSIDER)
    assert [r["name"] for r in outsider["resources"]] == ["billing"]
    assert [r["name"] for r in insider["resources"]] == ["billing", "secret"]

    def all_resources(token: str) -> list[str]:
        uris: list[str] = []
        cursor = None
        while True:
            page = call(guarded.url, "resources/list", {"cursor": cursor} if cursor else None, token=token)
            uris += [r["uri"] for r in page["resources"]]
            cursor = page.get("nextCursor")
            if not cursor:
                return uris

    assert HIDDEN in all_resources(INSIDER)
    assert all(not uri.startswith("skill://acme/secret") for uri in all_resources(OUTSIDER))
    # A cursor the insider got right before the hidden skill continues, for the outsider, past it.
    first = call(guarded.url, "skills/list", token=INSIDER)
    second = call(guarded.url, "skills/list", {"cursor": first["nextCursor"]}, token=OUTSIDER)
    assert [s["uri"] for s in second["skills"]] == ["skill://open/hello/SKILL.md"]


def test_prefix_rules_match_whole_segments() -> None:
    rules = audience_rules([("skill://acme", ["a"]), ("skill://acme/open", ["a", "b"])])
    assert visible_to(rules, "skill://acme/x/SKILL.md", frozenset({"a"}))
    assert not visible_to(rules, "skill://acme/x/SKILL.md", frozenset({"b"}))
    assert visible_to(rules, "skill://acme/open/x/SKILL.md", frozenset({"b"}))  # the longest prefix decides
    assert visible_to(rules, "skill://acmesoft/x/SKILL.md", frozenset())  # not a segment of skill://acme
    assert not visible_to(rules, "skill://acme/x/SKILL.md", frozenset())


@pytest.mark.anyio
async def test_python_predicate_hides_in_process(tmp_path: Path) -> None:
    make_skill(tmp_path / "skills" / "keep", "keep")
    make_skill(tmp_path / "skills" / "drop", "drop")
    catalog = SkillCatalog([tmp_path / "skills"], digest_cache=DigestCache())
    skills = PerCallerSkills(catalog, visible=lambda skill, audiences: not skill.uri.startswith("skill://drop"))
    async with Client(build_server(skills)) as client:
        page = await client.session.send_request(RawRequest(method="skills/list", params=None), RawResult)
        data = page.model_dump()
    assert [s["uri"] for s in data["skills"]] == ["skill://keep/SKILL.md"]
    assert data["cacheScope"] == "private"
    assert anyio  # the in-memory client runs on the session's asyncio loop
