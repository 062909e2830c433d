"""Trust scope (issue 19, defects 3 and 9): a key's prefixes follow the one URI-scope rule, and a trust
file of the wrong shape is refused, naming the key, never read into a scope that covers everything.

In process: a real Ed25519 key from `cryptography`, the real `TrustStore` file, `skillwire trust` through
`cli.main`.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from skillwire.cli.main import main
from skillwire.host.identity import SkillRef
from skillwire.host.trust import TrustedKey, TrustStore


@pytest.fixture(scope="module")
def public_line() -> str:
    key = Ed25519PrivateKey.generate().public_key()
    return key.public_bytes(serialization.Encoding.OpenSSH, serialization.PublicFormat.OpenSSH).decode()


def ref(uri: str, origin: str = "work") -> SkillRef:
    return SkillRef(origin, uri)


@pytest.mark.parametrize("prefix", ["skill://acme", "skill://acme/", "SKILL://acme", "skill://%61cme/"])
def test_a_prefix_covers_its_own_tree_and_never_a_sibling(public_line: str, prefix: str) -> None:
    key = TrustedKey("acme", public_line, prefixes=(prefix,))
    assert key.prefixes == ("skill://acme",)  # one canonical spelling, whatever was written
    assert key.covers(ref("skill://acme/billing/SKILL.md"))
    assert key.covers(ref("skill://%61cme/billing/SKILL.md"))  # the same URI, spelled otherwise
    assert not key.covers(ref("skill://acmesoft/billing/SKILL.md"))
    assert not key.covers(ref("skill://acme-evil/SKILL.md"))
    assert not key.covers(ref("other://acme/billing/SKILL.md"))


def test_a_deeper_prefix_stops_at_a_segment_boundary(public_line: str) -> None:
    key = TrustedKey("acme", public_line, prefixes=("skill://acme/billing",))
    assert key.covers(ref("skill://acme/billing/refunds/SKILL.md"))
    assert not key.covers(ref("skill://acme/billing-evil/SKILL.md"))
    assert not key.covers(ref("skill://acme/other/SKILL.md"))


@pytest.mark.parametrize("prefix", ["", "  ", "skill://", "acme", "skill://acme/../x"])
def test_a_prefix_that_is_no_scope_is_refused_naming_the_key(public_line: str, prefix: str) -> None:
    with pytest.raises(ValueError, match="trusted key 'acme'"):
        TrustedKey("acme", public_line, prefixes=(prefix,))


def test_an_origin_that_is_no_label_is_refused(public_line: str) -> None:
    with pytest.raises(ValueError, match=r"trusted key 'acme'.*invalid origin label"):
        TrustedKey("acme", public_line, origins=("../work",))


def write_file(path: Path, public_line: str, **fields: object) -> None:
    path.write_text(json.dumps({"keys": [{"name": "acme", "key": public_line, **fields}]}))


@pytest.mark.parametrize(
    ("fields", "named"),
    [
        ({"prefixes": "skill://acme/"}, "'prefixes' must be a list of strings, not str"),
        ({"origins": "work"}, "'origins' must be a list of strings, not str"),
        ({"prefixes": [1]}, "'prefixes' must be a list of strings"),
        ({"prefixes": {"skill://acme/": True}}, "'prefixes' must be a list of strings, not dict"),
        ({"prefixes": [""]}, "an empty scope"),
        ({"prefix": ["skill://acme/"]}, "unknown field 'prefix'"),
    ],
)
def test_a_malformed_trust_file_fails_closed_and_names_the_key(
    tmp_path: Path, public_line: str, fields: dict[str, object], named: str
) -> None:
    path = tmp_path / "trust.json"
    write_file(path, public_line, **fields)
    with pytest.raises(ValueError, match="key 'acme'") as caught:
        TrustStore(path).trusted_keys()
    assert named in str(caught.value)
    assert "\n" not in str(caught.value)


def test_the_file_stores_canonical_prefixes(tmp_path: Path, public_line: str) -> None:
    store = TrustStore(tmp_path / "trust.json")
    store.add(TrustedKey("acme", public_line, prefixes=("SKILL://acme/",)))
    assert json.loads(store.path.read_text())["keys"][0]["prefixes"] == ["skill://acme"]
    (key,) = store.trusted_keys()
    assert not key.covers(ref("skill://acmesoft/x/SKILL.md"))


def test_trust_add_refuses_an_empty_prefix_in_one_line(
    tmp_path: Path, public_line: str, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "trust.json"
    code = main(["trust", "--file", str(path), "add", "acme", public_line, "--prefix", ""])
    err = capsys.readouterr().err
    assert code == 2
    assert err.count("\n") == 1
    assert "empty scope" in err
    assert not path.exists()  # nothing was trusted
    assert main(["trust", "--file", str(path), "add", "acme", public_line, "--prefix", "skill://acme/"]) == 0
    assert "under skill://acme/" in capsys.readouterr().out
