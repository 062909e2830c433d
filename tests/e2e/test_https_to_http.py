"""An https:// URL to a server that speaks plain HTTP (issue 37): one line saying so and giving the http:// URL,
from the terminal commands and from the bridge's upstream check, instead of OpenSSL's "wrong version number"."""

from __future__ import annotations

from support.cli import run_cli


def test_ls_says_the_server_speaks_plain_http(examples_url: str) -> None:
    wrong = examples_url.replace("http://", "https://", 1)
    result = run_cli("ls", wrong)
    assert result.code == 1
    assert result.err.strip() == f"skillwire: error: {wrong} speaks plain HTTP, not HTTPS; use {examples_url}"


def test_the_bridge_check_says_the_same(examples_url: str) -> None:
    wrong = examples_url.replace("http://", "https://", 1)
    result = run_cli("bridge", "--check", "--server", f"work={wrong}")
    assert result.code == 1
    assert f"{wrong} speaks plain HTTP, not HTTPS; use {examples_url}" in result.err + result.text
    assert "SSL" not in result.err + result.text
