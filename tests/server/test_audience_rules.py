"""Audience rules and the tokens file (issue 19, defects 10 and 11).

A rule's prefix is a scope in the one sense `core.uri.canonical_scope` / `in_scope` give it: however it
is spelt (`SKILL://secret`, `skill://%73ecret`, a trailing `/`) on `serve --audience`, `publish
--audience` or in an index, it hides `skill://secret`; an empty or unparsable prefix and two rules for
one prefix are refused in one line. A tokens file naming one token twice is refused at start.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import obstore
import pytest
from obstore.store import LocalStore

from skillwire.catalog.audiences import audience_rules, parse_audience_rule, visible_to
from skillwire.catalog.published import canonical_json, snapshot_from_index
from skillwire.catalog.store import BlobReader, parse_location
from skillwire.cli.main import main
from skillwire.core.errors import InvalidAudienceRule, InvalidIndex
from skillwire.server.visibility import StaticTokens

SECRET = "skill://secret/plans/SKILL.md"
SPELLINGS = ["skill://secret", "SKILL://secret", "skill://%73ecret", "Skill://%73ecret/", "skill://secret/"]


@pytest.mark.parametrize("prefix", SPELLINGS)
def test_every_spelling_of_a_prefix_hides_the_same_skills(prefix: str) -> None:
    scope, audiences = parse_audience_rule(f"{prefix}=team")
    assert scope == "skill://secret"
    assert audiences == {"team"}
    rules = audience_rules([(scope, audiences)])
    assert not visible_to(rules, SECRET, frozenset())
    assert visible_to(rules, SECRET, frozenset({"team"}))
    assert visible_to(rules, "skill://secretive/x/SKILL.md", frozenset())  # a sibling, not below it
    # Rules made in code are canonicalised the same way.
    assert audience_rules([(prefix, ["team"])]) == (("skill://secret", frozenset({"team"})),)


@pytest.mark.parametrize(
    ("rule", "message"),
    [
        ("skill://=team", "is not a URI prefix"),
        ("skill://a/../b=team", "is not a URI prefix"),
        ("skill://a/%2Fb=team", "is not a URI prefix"),
        ("skill://a=", "write PREFIX=AUD"),
        ("acme=team", "write PREFIX=AUD"),
    ],
)
def test_an_unusable_prefix_is_refused_in_one_line(rule: str, message: str) -> None:
    with pytest.raises(InvalidAudienceRule, match=message) as info:
        audience_rules([parse_audience_rule(rule)])
    assert "\n" not in str(info.value)


def test_two_rules_for_one_prefix_however_spelt_are_refused() -> None:
    with pytest.raises(InvalidAudienceRule, match="give each prefix one rule"):
        audience_rules([("skill://secret", ["a"]), ("SKILL://%73ecret/", ["b"])])


def _index_with_audiences(prefix: str) -> bytes:
    head = {
        "format": "skillwire-index/2",
        "skills": 1,
        "files": 1,
        "digests": "ab" * 32,
        "mimeTypes": ["text/markdown"],
        "audiences": [{"prefix": prefix, "audiences": ["team"]}],
    }
    line = b'{"uri":"skill://secret/plans/SKILL.md","files":[["SKILL.md",0,3,0,true]],"frontmatter":{"name":"plans"},"source":"s"}'
    return canonical_json(head) + b"\n" + line


def _load(body: bytes) -> object:
    blobs = BlobReader(None, parse_location("s3://b"))  # type: ignore[arg-type]
    return snapshot_from_index(body, hashlib.sha256(body).hexdigest(), blobs)


@pytest.mark.parametrize("prefix", SPELLINGS)
def test_an_index_declaring_a_non_canonical_prefix_still_hides_the_skill(prefix: str) -> None:
    snapshot = _load(_index_with_audiences(prefix))
    rules = snapshot.audience_rules  # type: ignore[attr-defined]
    assert rules == (("skill://secret", frozenset({"team"})),)
    assert not visible_to(rules, SECRET, frozenset())


def test_an_index_with_an_unusable_prefix_is_refused_naming_its_audiences() -> None:
    with pytest.raises(InvalidIndex, match=r"^index: audiences: audience prefix 'skill://' is not a URI prefix"):
        _load(_index_with_audiences("skill://"))


def test_publish_records_the_canonical_prefix(tmp_path: Path) -> None:
    (tmp_path / "skills" / "plans").mkdir(parents=True)
    (tmp_path / "skills" / "plans" / "SKILL.md").write_text("---\nname: plans\ndescription: Plans.\n---\nx\n")
    target = f"file://{tmp_path / 'store'}"
    code = main(["publish", f"{tmp_path / 'skills'}=secret", target, "--audience", "skill://%73ecret=team", "-q"])
    assert code == 0
    store = LocalStore(str(tmp_path / "store"))
    pointer = json.loads(bytes(obstore.get(store, "current.json").bytes()))
    header = bytes(obstore.get(store, pointer["index"]).bytes()).split(b"\n", 1)[0]
    assert json.loads(header)["audiences"] == [{"audiences": ["team"], "prefix": "skill://secret"}]


def test_a_tokens_file_naming_one_token_twice_is_refused(tmp_path: Path) -> None:
    token = "the-same-token"
    entries = [
        {"client": "ci", "token": token, "audiences": []},
        {"client": "admin", "sha256": hashlib.sha256(token.encode()).hexdigest().upper(), "audiences": ["all"]},
    ]
    path = tmp_path / "tokens.json"
    path.write_text(json.dumps({"tokens": entries}))
    with pytest.raises(InvalidAudienceRule) as info:
        StaticTokens.from_file(path)
    assert str(info.value) == "tokens[1] ('admin') has the same token as tokens[0] ('ci'); list each token once"
    assert len(StaticTokens(entries[:1])._by_digest) == 1  # one entry is fine
