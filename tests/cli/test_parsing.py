"""The command line's parsing, in process and without a server: every command's arguments, the options
several commands share (`cli/args.py` defines each once), and the one-line usage errors (exit status 2)
for combinations that cannot work, raised before anything is connected to or written.

End-to-end tests (`tests/e2e/test_cli_*.py`) run the same commands against real servers; these hold the
parsing rules alone, fast enough for the inner loop.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from skillwire._version import __version__
from skillwire.cli.args import UsageError, server_target, trust_from_args
from skillwire.cli.main import COMMANDS, build_parser
from support.cli import CliResult, run_cli

# Nothing listens on port 9 (discard) here; every test below must fail before it would connect.
NOWHERE = "http://127.0.0.1:9/mcp"


def parse(*argv: str) -> argparse.Namespace:
    return build_parser().parse_args(list(argv))


def usage_error(result: CliResult, *expected: str) -> str:
    """The one stderr line of a usage error (exit status 2), which must contain each of `expected`."""
    assert result.code == 2, (result.code, result.err)
    lines = result.err.strip().splitlines()
    assert len(lines) == 1, result.err
    assert lines[0].startswith("skillwire: "), lines[0]
    for text in expected:
        assert text in lines[0], lines[0]
    assert result.out == b""
    return lines[0]


# -- every command ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("command", COMMANDS)
def test_every_command_has_help_and_exits_0(command: str) -> None:
    result = run_cli(command, "--help")
    assert result.code == 0, result.err
    assert result.text.startswith(f"usage: skillwire {command}"), result.text[:200]


def test_the_top_level_help_lists_every_command() -> None:
    result = run_cli("--help")
    assert result.code == 0
    for command in COMMANDS:
        assert f"    {command}" in result.text, command


def test_version_prints_the_version_and_exits_0() -> None:
    result = run_cli("--version")
    assert (result.code, result.text.strip()) == (0, f"skillwire {__version__}")


def test_an_unknown_command_is_a_usage_error() -> None:
    result = run_cli("frobnicate")
    assert result.code == 2
    assert "invalid choice: 'frobnicate'" in result.err


@pytest.mark.parametrize("command", ["ls", "get", "cat", "pull", "check", "lint", "serve", "bridge", "publish"])
def test_an_unknown_option_is_a_usage_error(command: str) -> None:
    result = run_cli(command, "--no-such-option", "x")
    assert result.code == 2
    assert "unrecognized arguments: --no-such-option" in result.err


def test_no_command_is_a_usage_error() -> None:
    result = run_cli()
    assert result.code == 2
    assert "required: COMMAND" in result.err


# -- what each command parses ------------------------------------------------------------------------------------------


def test_ls_parses_its_server_headers_and_timeout() -> None:
    args = parse("ls", "--header", "X-A: 1", "--header", "X-B:2", "--timeout", "2.5", NOWHERE)
    assert (args.server, args.header, args.timeout) == (NOWHERE, ["X-A: 1", "X-B:2"], 2.5)
    args.stdio_command = None
    target = server_target(args)
    assert (target.url, target.command, target.headers, target.timeout) == (
        NOWHERE,
        None,
        (("X-A", "1"), ("X-B", "2")),
        2.5,
    )


def test_a_stdio_server_is_the_command_after_the_double_dash() -> None:
    args = parse("ls")
    args.stdio_command = ["python", "-m", "server", "--flag"]
    target = server_target(args)
    assert (target.url, target.command) == (None, ("python", "-m", "server", "--flag"))
    assert target.label == "python -m server --flag"


def test_pull_parses_its_destination_selection_and_sync_options(tmp_path: Path) -> None:
    args = parse(
        "pull",
        "skill://a/b/SKILL.md",
        "pdf",
        NOWHERE,
        "--to",
        str(tmp_path),
        "--origin",
        "acme",
        "--json",
        "-q",
    )
    assert (args.items, args.to, args.origin, args.json, args.quiet) == (
        ["skill://a/b/SKILL.md", "pdf", NOWHERE],
        tmp_path,
        "acme",
        True,
        True,
    )
    assert (args.host, args.prune, args.force, args.yes, args.trust, args.trust_file) == (
        None,
        False,
        False,
        False,
        "off",
        None,
    )
    synced = parse("pull", NOWHERE, "--for", "claude", "--prune", "--force", "-y", "--project", str(tmp_path))
    assert (synced.host, synced.prune, synced.force, synced.yes) == ("claude", True, True, True)
    assert synced.project == tmp_path


def test_pull_for_takes_only_the_documented_hosts() -> None:
    result = run_cli("pull", NOWHERE, "--for", "notepad")
    assert result.code == 2
    assert "argument --for: invalid choice: 'notepad'" in result.err


def test_bridge_parses_its_upstreams() -> None:
    args = parse(
        "bridge",
        "--server",
        f"a={NOWHERE}",
        "--server-command",
        "b=python -m srv",
        "--header",
        "a:X-Token: t",
        "--local",
        "/skills",
        "--page-size",
        "7",
        "--allow-host",
        "example.test",
        "-q",
    )
    assert args.server == [f"a={NOWHERE}"]
    assert args.server_command == ["b=python -m srv"]
    assert args.header == ["a:X-Token: t"]
    assert args.local == ["/skills"]
    assert (args.page_size, args.allow_host, args.quiet) == (7, ["example.test"], True)


def test_serve_and_bridge_share_allow_host() -> None:
    for command in (["serve", "skills"], ["bridge"]):
        args = parse(*command, "--allow-host", "a.test", "--allow-host", "b.test")
        assert args.allow_host == ["a.test", "b.test"], command
        assert parse(*command).allow_host == [], command


def test_serve_and_publish_share_audience() -> None:
    for command in (["serve", "skills"], ["publish", "skills", "file:///tmp/out"]):
        args = parse(*command, "--audience", "acme=a,b", "--audience", "beta=c")
        assert args.audience == ["acme=a,b", "beta=c"], command
        assert parse(*command).audience == [], command


@pytest.mark.parametrize(
    "argv",
    [["serve", "skills"], ["bridge"], ["cat", "x", NOWHERE], ["publish", "a", "b"], ["pull", NOWHERE], ["ls", NOWHERE]],
)
def test_quiet_has_a_short_form_wherever_it_is_taken(argv: list[str]) -> None:
    assert parse(*argv, "-q").quiet is True
    assert parse(*argv, "--quiet").quiet is True
    assert parse(*argv).quiet is False


@pytest.mark.parametrize("argv", [["ls", NOWHERE], ["get", "x", NOWHERE], ["pull", NOWHERE], ["approvals"]])
def test_json_is_taken_by_the_listing_commands(argv: list[str]) -> None:
    assert parse(*argv, "--json").json is True
    assert parse(*argv).json is False


def test_approvals_takes_json_but_not_quiet() -> None:
    result = run_cli("approvals", "--quiet")
    assert result.code == 2
    assert "unrecognized arguments: --quiet" in result.err


# -- --trust and --trust-file, one definition for bridge, approve and pull --for ------------------------------------


TRUSTING = {
    "bridge": ["bridge"],
    "approve": ["approve", "a", "skill://a/SKILL.md"],
    "pull": ["pull", NOWHERE, "--for", "claude"],
}


@pytest.mark.parametrize("command", sorted(TRUSTING))
def test_trust_options_parse_the_same_everywhere(command: str, tmp_path: Path) -> None:
    argv = TRUSTING[command]
    assert (parse(*argv).trust, parse(*argv).trust_file) == ("off", None)
    args = parse(*argv, "--trust", "require", "--trust-file", str(tmp_path / "keys.json"))
    assert (args.trust, args.trust_file) == ("require", tmp_path / "keys.json")
    result = run_cli(*argv, "--trust", "maybe")
    assert result.code == 2
    assert "argument --trust: invalid choice: 'maybe'" in result.err


@pytest.mark.parametrize("command", sorted(TRUSTING))
def test_a_bad_trust_file_is_a_usage_error_naming_it(command: str, tmp_path: Path) -> None:
    bad = tmp_path / "keys.json"
    bad.write_text('{"keys": "not a list"}')
    args = parse(*TRUSTING[command], "--trust", "warn", "--trust-file", str(bad))
    with pytest.raises(UsageError, match=r"keys\.json: not a skillwire trust file"):
        trust_from_args(args)
    # off reads no file at all, so a broken one does not matter
    assert trust_from_args(parse(*TRUSTING[command], "--trust-file", str(bad))).keys == ()


def test_trust_from_args_reads_the_keys_of_the_trust_file(tmp_path: Path) -> None:
    keys = tmp_path / "keys.json"
    keys.write_text('{"keys": []}')
    policy = trust_from_args(parse("bridge", "--trust", "require", "--trust-file", str(keys)))
    assert (policy.mode, policy.keys) == ("require", ())


def test_pull_help_says_its_trust_options_go_with_for() -> None:
    text = run_cli("pull", "--help").text
    assert "with --for: publisher signatures" in " ".join(text.split())
    assert "with --for: trusted publisher keys" in " ".join(text.split())


# -- usage errors: combinations that cannot work, one line and exit 2, before anything runs ---------------------------


def test_a_url_and_a_stdio_command_together_are_refused() -> None:
    usage_error(run_cli("ls", NOWHERE, "--", "python", "-m", "server"), "give either a URL or `-- COMMAND`, not both")


def test_no_server_is_refused_with_both_ways_to_give_one() -> None:
    usage_error(run_cli("ls"), "no server given", "http(s)://", "-- COMMAND ARGS")


@pytest.mark.parametrize("timeout", ["0", "-1"])
def test_a_timeout_that_is_not_positive_is_refused(timeout: str) -> None:
    usage_error(run_cli("ls", NOWHERE, "--timeout", timeout), "--timeout must be a positive number of seconds")


def test_a_timeout_that_is_not_a_number_is_an_argparse_error() -> None:
    result = run_cli("ls", NOWHERE, "--timeout", "soon")
    assert result.code == 2
    assert "argument --timeout: invalid float value: 'soon'" in result.err


def test_a_header_without_a_colon_is_refused() -> None:
    usage_error(run_cli("ls", NOWHERE, "--header", "X-Token"), "--header wants NAME:VALUE, got 'X-Token'")


def test_pull_needs_to_or_for() -> None:
    usage_error(run_cli("pull", NOWHERE), "say where to write: --to DIR, or --for HOST")


def test_pull_refuses_to_and_for_together(tmp_path: Path) -> None:
    usage_error(run_cli("pull", NOWHERE, "--to", str(tmp_path), "--for", "claude"), "drop --to")


@pytest.mark.parametrize("option", ["--prune", "--force", "--yes"])
def test_a_sync_option_without_for_is_refused(option: str, tmp_path: Path) -> None:
    usage_error(run_cli("pull", NOWHERE, "--to", str(tmp_path), option), f"{option} goes with --for HOST")


def test_pull_for_prune_refuses_a_selection() -> None:
    usage_error(run_cli("pull", "pdf", NOWHERE, "--for", "claude", "--prune"), "--prune needs the whole listing")


def test_pull_check_refuses_a_selection(tmp_path: Path) -> None:
    usage_error(
        run_cli("pull", "pdf", NOWHERE, "--to", str(tmp_path), "--check"), "--check compares every skill in skills.lock"
    )


def test_pull_check_without_a_lock_says_how_to_make_one(tmp_path: Path) -> None:
    usage_error(run_cli("pull", NOWHERE, "--to", str(tmp_path), "--check"), "no skills.lock in", "skillwire pull --to")


def test_pull_to_a_file_is_refused(tmp_path: Path) -> None:
    target = tmp_path / "file"
    target.write_text("")
    usage_error(run_cli("pull", NOWHERE, "--to", str(target)), "is not a directory")


@pytest.mark.parametrize(
    ("options", "expected"),
    [
        (["--page-size", "0"], "--page-size must be at least 1, got 0"),
        (["--upstream-timeout", "0"], "--upstream-timeout must be a positive number of seconds"),
    ],
)
def test_bridge_refuses_bad_numbers_and_addresses(options: list[str], expected: str, tmp_path: Path) -> None:
    usage_error(run_cli("bridge", "--local", str(tmp_path), *options), expected)


def test_bridge_refuses_an_http_address_without_a_port(tmp_path: Path) -> None:
    result = run_cli("bridge", "--local", str(tmp_path), "--http", "nowhere")
    # after the line naming its upstreams, which the bridge prints once they are read
    assert result.code == 2, result.err
    assert result.err.strip().splitlines()[-1] == "skillwire: --http wants HOST:PORT, got 'nowhere'"


def test_bridge_without_upstreams_says_how_to_name_them() -> None:
    usage_error(run_cli("bridge"), "bridge.toml: no such file", "name upstreams with --server")


@pytest.mark.parametrize(
    ("options", "expected"),
    [
        (["--concurrency", "0"], "--concurrency must be at least 1, got 0"),
        (["--max-pages", "0"], "--max-pages must be at least 1, got 0"),
    ],
)
def test_check_refuses_bad_numbers(options: list[str], expected: str) -> None:
    usage_error(run_cli("check", NOWHERE, *options), expected)


def test_lint_without_a_path_says_how_to_name_one() -> None:
    usage_error(run_cli("lint"), "no PATH given", "skillwire lint ./skills")


def test_lint_refuses_json_and_another_format(tmp_path: Path) -> None:
    usage_error(run_cli("lint", str(tmp_path), "--json", "--format", "text"), "--json and --format text disagree")


def test_publish_needs_a_target_after_the_paths() -> None:
    usage_error(run_cli("publish", "skills"), "publish wants PATH... TARGET")


def test_serve_refuses_a_missing_folder(tmp_path: Path) -> None:
    usage_error(run_cli("serve", str(tmp_path / "absent")), "no such folder:")


def test_serve_refuses_a_file_as_a_root(tmp_path: Path) -> None:
    root = tmp_path / "SKILL.md"
    root.write_text("")
    usage_error(run_cli("serve", str(root)), "not a folder:")


@pytest.mark.parametrize(
    ("options", "expected"),
    [
        # --stdio, not the default HTTP: should a check move after the start, the test ends at stdin's EOF
        # instead of serving on a port until it is killed.
        (["--workers", "0", "--stdio"], "--workers wants a number of processes, 1 or more; got 0"),
        (["--workers", "2", "--stdio"], "--workers needs HTTP (stdio serves one client)"),
        (["--http", "nowhere"], "--http wants HOST:PORT, got 'nowhere'"),
        (["--require-signed-commit", "--stdio"], "--require-signed-commit applies to a git root"),
    ],
)
def test_serve_refuses_combinations_that_cannot_work(options: list[str], expected: str, tmp_path: Path) -> None:
    usage_error(run_cli("serve", str(tmp_path), *options), expected)


def test_serve_tokens_needs_http(tmp_path: Path) -> None:
    tokens = tmp_path / "tokens"
    tokens.write_text("")
    usage_error(run_cli("serve", str(tmp_path), "--stdio", "--tokens", str(tokens)), "--tokens needs HTTP")


def test_approvals_refuses_an_unknown_action() -> None:
    usage_error(run_cli("approvals", "forget"), "unknown approvals action 'forget'")


def test_approvals_revoke_needs_a_label_and_a_uri() -> None:
    usage_error(run_cli("approvals", "revoke", "a"), "write: skillwire approvals revoke LABEL URI")


def test_trust_add_of_a_missing_file_says_so(tmp_path: Path) -> None:
    usage_error(
        run_cli("trust", "--file", str(tmp_path / "t.json"), "add", "acme", str(tmp_path / "absent.pub")),
        "no such file",
    )


def test_trust_remove_of_an_unknown_name_names_the_store(tmp_path: Path) -> None:
    store = tmp_path / "t.json"
    usage_error(run_cli("trust", "--file", str(store), "remove", "nobody"), "no trusted key named 'nobody'", str(store))


def test_sign_with_a_missing_key_says_so(tmp_path: Path) -> None:
    usage_error(run_cli("sign", str(tmp_path), "--key", str(tmp_path / "absent")), "no such key file")


def test_pull_help_names_each_hosts_folder_instead_of_pointing_at_itself() -> None:
    # Issue 37 friction: `--for` said "see `skillwire pull --help`" inside `skillwire pull --help`.
    shown = run_cli("pull", "--help")
    assert shown.code == 0
    text = " ".join(shown.text.split())
    assert "see `skillwire pull --help`" not in text
    for host, folder in (("claude", "~/.claude/skills"), ("codex", "~/.agents/skills"), ("gemini", "~/.gemini/skills")):
        assert f"{host} {folder}" in text


def test_the_readmes_pull_target_is_ignored_by_git() -> None:
    # Issue 37 friction: the README pulls into ./vendor, which `git status` then showed as new files.
    root = Path(__file__).resolve().parents[2]
    assert "vendor/" in (root / ".gitignore").read_text().splitlines()
    assert "pull --to ./vendor" in (root / "README.md").read_text()


# -- issue 37: a mistake names the flag and exits 2; --help says what the README says ---------------------------


@pytest.mark.parametrize(
    ("options", "expected"),
    [
        (["--page-size", "0"], "skillwire: --page-size must be at least 1, got 0"),
        (["--ttl-ms", "-1"], "skillwire: --ttl-ms must be at least 0, got -1"),
        (["--poll", "-1"], "skillwire: --poll must be at least 0, got -1"),
        (["--blob-cache-mb", "-5"], "skillwire: --blob-cache-mb must be at least 0, got -5"),
        (["--drain-seconds", "-1"], "skillwire: --drain-seconds must be at least 0, got -1"),
        (["--http", "127.0.0.1:99999"], "skillwire: --http: port 99999 is out of range (0-65535)"),
    ],
)
def test_serve_numbers_out_of_range_name_the_flag_and_exit_2(options: list[str], expected: str, tmp_path: Path) -> None:
    assert usage_error(run_cli("serve", str(tmp_path), *options)) == expected


def test_a_misspelt_flag_shows_the_commands_usage_and_the_closest_flag(tmp_path: Path) -> None:
    result = run_cli("serve", str(tmp_path), "--htttp", "127.0.0.1:1")
    assert result.code == 2
    lines = result.err.strip().splitlines()
    assert lines[0].startswith("usage: skillwire serve ")
    assert lines[-1] == "skillwire serve: error: unrecognized arguments: --htttp 127.0.0.1:1 (did you mean --http?)"
    result = run_cli("ls", "--jsno", "http://127.0.0.1:1/mcp")
    assert result.err.strip().splitlines()[-1] == (
        "skillwire ls: error: unrecognized arguments: --jsno (did you mean --json?)"
    )


def test_help_shows_the_defaults_and_variables_the_readme_names() -> None:
    flat = " ".join(run_cli("serve", "--help").text.split())
    assert "every SECONDS (0: never; default 30)" in flat
    assert "memory for cached file bytes (default 64)" in flat
    publish = " ".join(run_cli("publish", "--help").text.split())
    for variable in ("AWS_ENDPOINT_URL", "AWS_REGION", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_ALLOW_HTTP"):
        assert variable in publish
    assert "replaced, scope and all" in " ".join(run_cli("trust", "--help").text.split())


def test_bridge_help_shows_a_bridge_toml_that_parses(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from skillwire.bridge.config import read_config_file

    monkeypatch.setenv("HOME", str(tmp_path))
    (tmp_path / "my-skills").mkdir()  # the example's local folder, ~/my-skills

    text = run_cli("bridge", "--help").text
    example = text.split("bridge.toml (or --config FILE), for example:\n", 1)[1].split("\nThe bridge speaks", 1)[0]
    config = tmp_path / "bridge.toml"
    config.write_text("\n".join(line.removeprefix("  ") for line in example.splitlines()) + "\n")
    upstreams, _ = read_config_file(config)
    assert [upstream.label for upstream in upstreams] == ["work", "tools", "mine"]
    usage_error(run_cli("bridge"), "no such file", "`skillwire bridge --help` shows the format")


def test_trust_add_of_a_name_already_there_says_it_replaces_it(tmp_path: Path) -> None:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    public = Ed25519PrivateKey.generate().public_key()
    key = tmp_path / "k"
    Path(str(key) + ".pub").write_bytes(
        public.public_bytes(serialization.Encoding.OpenSSH, serialization.PublicFormat.OpenSSH)
    )
    file = ["--file", str(tmp_path / "trust.json")]
    first = run_cli("trust", *file, "add", "acme", str(key) + ".pub", "--origin", "work")
    assert first.code == 0
    assert first.text.startswith("trusted acme (")
    again = run_cli("trust", *file, "add", "acme", str(key) + ".pub")
    lines = again.text.splitlines()
    assert lines[0].startswith("replaced acme ("), lines
    assert lines[0].endswith(", for origin 'work'"), lines
    assert lines[1].startswith("trusted acme ("), lines
    assert "origin" not in lines[1], lines
