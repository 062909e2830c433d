"""The bridge's configuration: command-line upstreams, the TOML file, and the approve command it prints."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest

from skillwire.bridge.config import CommandLineUpstreams, bridge_approvals_path, default_config_path, load_config
from skillwire.core.errors import BridgeConfigError
from support.cli import run_cli

URI = "skill://pdf-forms/SKILL.md"


def test_command_line_upstreams_of_every_kind(tmp_path: Path) -> None:
    config = load_config(
        CommandLineUpstreams(
            servers=["work=https://skills.example.com/mcp", "pipe"],
            server_commands=["tools=python -m my_server --flag 'two words'"],
            headers=["work:Authorization: Bearer T"],
            local=[str(tmp_path)],
            trailing_command=["node", "server.js"],
        )
    )
    work, pipe, tools = config.servers
    assert (work.label, work.url, work.headers) == (
        "work",
        "https://skills.example.com/mcp",
        (("Authorization", "Bearer T"),),
    )
    assert (pipe.label, pipe.command) == ("pipe", ("node", "server.js"))
    assert tools.command == ("python", "-m", "my_server", "--flag", "two words")
    assert [(loc.label, loc.paths) for loc in config.local] == [("local", (tmp_path.resolve(),))]
    assert config.approvals == bridge_approvals_path()
    assert config.config_file is None  # flags given: the default file is not read


@pytest.mark.parametrize(
    ("given", "message"),
    [
        (CommandLineUpstreams(servers=["work"]), "names no URL"),
        (CommandLineUpstreams(servers=["work=ftp://x"]), "--server-command work="),
        (CommandLineUpstreams(servers=["a=http://x/mcp"], headers=["b:X: y"]), "no --server b=URL"),
        (CommandLineUpstreams(servers=["a=http://x/mcp"], headers=["a:novalue"]), "LABEL:Name: value"),
        (CommandLineUpstreams(servers=["a=http://x/mcp", "a=http://y/mcp"]), "two upstreams are labelled 'a'"),
        (CommandLineUpstreams(servers=["bad/label=http://x/mcp"]), "invalid origin label"),
        (CommandLineUpstreams(server_commands=["t="]), "--server-command wants"),
        (CommandLineUpstreams(servers=["a=http://x/mcp"], trailing_command=["python"]), "needs a --server LABEL"),
        (CommandLineUpstreams(local=["/nonexistent/skills"]), "--local: /nonexistent/skills is not a folder"),
    ],
)
def test_command_line_mistakes_are_one_line(given: CommandLineUpstreams, message: str) -> None:
    with pytest.raises(BridgeConfigError) as caught:
        load_config(given)
    assert message in str(caught.value)
    assert "\n" not in str(caught.value)


@pytest.mark.parametrize(
    ("typed", "meant"),
    [("127.0.0.1:8765/mcp", "http://127.0.0.1:8765/mcp"), ("skills.example.com/mcp", "https://skills.example.com/mcp")],
)
def test_an_address_without_a_scheme_is_told_the_url_not_the_stdio_advice(typed: str, meant: str) -> None:
    with pytest.raises(BridgeConfigError) as caught:
        load_config(CommandLineUpstreams(servers=[f"work={typed}"]))
    assert str(caught.value) == f"--server work: {typed!r} has no scheme; write --server work={meant}"


def test_a_command_given_to_server_still_gets_the_stdio_advice() -> None:
    with pytest.raises(BridgeConfigError) as caught:
        load_config(CommandLineUpstreams(servers=["work=python"]))
    assert "--server-command work='COMMAND ARGS'" in str(caught.value)


def test_toml_file(tmp_path: Path) -> None:
    (tmp_path / "skills").mkdir()
    config_file = tmp_path / "bridge.toml"
    config_file.write_text(
        'approvals = "state/approvals.sqlite"\n'
        '[servers.work]\nurl = "https://skills.example.com/mcp"\nheaders = { Authorization = "Bearer T" }\n'
        '[servers.tools]\ncommand = "python -m my_server"\nenv = { TOKEN = "x" }\n'
        '[servers.mine]\nlocal = "skills"\n'
    )
    config = load_config(config_file=config_file)
    assert [s.label for s in config.servers] == ["work", "tools"]
    assert config.servers[0].headers == (("Authorization", "Bearer T"),)
    assert config.servers[1].command == ("python", "-m", "my_server")
    env = dict(config.servers[1].env)
    assert env["TOKEN"] == "x"
    assert "PATH" in env  # added to the SDK's default environment, not replacing it
    assert config.local[0].paths == ((tmp_path / "skills").resolve(),)  # relative to the file
    assert config.approvals == (tmp_path / "state" / "approvals.sqlite").resolve()
    assert config.config_file == config_file


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('[servers.a]\nurl = "https://x/mcp"\ncommand = ["y"]\n', "exactly one of url, command or local"),
        ('[servers.a]\nurl = "https://x/mcp"\ncolour = "red"\n', "unknown key 'colour'"),
        ('[servers.a]\nurl = "file:///x"\n', "http:// or https:// URL"),
        ("[servers.a]\ncommand = []\n", "non-empty list"),
        ('[servers.a]\ncommand = ["x"]\nheaders = { A = "b" }\n', "headers apply to a url"),
        ('[servers.a]\nurl = "https://x/mcp"\nheaders = { A = 1 }\n', "table of strings"),
        ("[servers]\n", "no upstreams"),
        ("servers = 1\n[other]\n", "unknown top-level key 'other'"),
        ("not toml at all = = =\n", "not valid TOML"),
        ('[servers."bad label"]\nurl = "https://x/mcp"\n', "invalid origin label"),
        ('[servers.mine]\nlocal = "missing"\n', "servers.mine.local: "),
    ],
)
def test_toml_mistakes_name_the_place(tmp_path: Path, text: str, message: str) -> None:
    config_file = tmp_path / "bridge.toml"
    config_file.write_text(text)
    with pytest.raises(BridgeConfigError) as caught:
        load_config(config_file=config_file)
    assert message in str(caught.value)
    assert str(config_file) in str(caught.value)


def test_no_arguments_read_the_default_file_and_say_so_when_it_is_missing() -> None:
    assert not default_config_path().exists()
    with pytest.raises(BridgeConfigError, match="no such file"):
        load_config()


def test_approve_command_repeats_only_what_is_not_default(tmp_path: Path) -> None:
    default = load_config(CommandLineUpstreams(servers=["work=https://x.example/mcp"]))
    assert default.approve_command("work", URI) == f"skillwire approve --server work=https://x.example/mcp work {URI}"
    approvals = tmp_path / "my approvals.sqlite"
    with_header = load_config(
        CommandLineUpstreams(servers=["work=https://x.example/mcp"], headers=["work:Authorization: Bearer SECRET"]),
        approvals=approvals,
    )
    command = with_header.approve_command("work", URI)
    assert "SECRET" not in command  # a header value is never shown to the model
    assert shlex.split(command)[:4] == ["skillwire", "approve", "--approvals", str(approvals.resolve())]
    assert "work:Authorization: <value>" in shlex.split(command)
    piped = load_config(CommandLineUpstreams(server_commands=["tools=python -m 'my server'"]))
    assert shlex.split(piped.approve_command("tools", URI))[2:4] == [
        "--server-command",
        "tools=python -m 'my server'",
    ]
    config_file = tmp_path / "bridge.toml"
    config_file.write_text('[servers.work]\nurl = "https://x.example/mcp"\n')
    from_file = load_config(config_file=config_file)
    assert shlex.split(from_file.approve_command("work", URI)) == [
        "skillwire",
        "approve",
        "--config",
        str(config_file),
        "work",
        URI,
    ]


def test_cli_usage_errors_are_one_line_with_exit_2(tmp_path: Path) -> None:
    bad = run_cli("bridge", "--server", "work=ftp://x")
    assert bad.code == 2
    assert "--server-command" in bad.err
    assert len(bad.err.strip().splitlines()) == 1
    unknown = run_cli("approve", "--server", "work=http://127.0.0.1:9/mcp", "other", URI)
    assert unknown.code == 2
    assert "no upstream labelled 'other'" in unknown.err
    store = str(tmp_path / "approvals.sqlite")
    assert "No approvals" in run_cli("approvals", "--approvals", store).text
    assert run_cli("approvals", "--approvals", store, "revoke", "work").code == 2
    missing = run_cli("approvals", "--approvals", store, "revoke", "work", URI)
    assert missing.code == 1
    assert "no approval for work" in missing.err


def test_approve_reports_an_unreachable_upstream_in_one_line() -> None:
    result = run_cli("approve", "--server", "work=http://127.0.0.1:9/mcp", "--yes", "work", URI)
    assert result.code == 1
    assert "cannot connect" in result.err
    assert "Traceback" not in result.err


def test_approvals_reads_the_store_named_by_the_config_file(tmp_path: Path) -> None:
    config_file = tmp_path / "bridge.toml"
    config_file.write_text('approvals = "elsewhere.sqlite"\n[servers.work]\nurl = "https://x.example/mcp"\n')
    listed = run_cli("approvals", "--config", str(config_file))
    assert listed.code == 0, listed.err
    assert f"No approvals in {(tmp_path / 'elsewhere.sqlite').resolve()}" in listed.text
    as_json = run_cli("approvals", "--config", str(config_file), "--json")
    assert json.loads(as_json.text) == {"store": str((tmp_path / "elsewhere.sqlite").resolve()), "approvals": []}
