"""The README as a newcomer meets it: a fresh `git clone` (no `../shared` beside it, no `.venv`), then
`./scripts/serve`, then the README's shell commands, as written, in another shell.

One clone per session (a module fixture): the first `./scripts/serve` creates `.venv` and installs
skillwire with its runtime dependencies (about 20 s from a local package index), which is what this
measures against the README's promise (listening within 60 s, saying what it installs, no dev tools).

Which README commands run is decided by a rule (`skip_reason`), not a list: every command of every
```bash block runs, in README order, in the clone with `source .venv/bin/activate` done first, except
- long-running programs (a server: `./scripts/serve`, `skillwire serve`, `skillwire bridge`; or the
  whole test suite / benchmarks, minutes each): the test started the README's server itself;
- commands that need the network (a URL whose host is not this machine), and the commands after
  one in the same block (they build on it);
- commands on the reader's own files or keys (a `~/` path, such as a signing key);
- programs this project does not provide (a host's own CLI such as `claude`).
The server the README names (`http://127.0.0.1:8765/mcp`) is this test's `./scripts/serve`, on a free
port; that port is the only change made to any command. Each command that runs must exit 0 and do
what its README comment says (checked per subcommand below).
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlparse

import pytest

from servers import free_port, stop_process
from support.servers import REPO_ROOT

README_PORT = "127.0.0.1:8765"
LONG_RUNNING = (
    "./scripts/serve",
    "./scripts/test",
    "skillwire serve",
    "skillwire bridge",
    "skillwire browse",
    ".venv/bin/python -m bench",
)
OUR_PROGRAMS = ("skillwire", "./scripts/", ".venv/bin/", "source")
LOCAL_HOSTS = ("127.0.0.1", "localhost", "[::1]")
SERVE_DEADLINE = 60.0  # seconds from `./scripts/serve` on a fresh clone to listening (issue 10)


@dataclass
class Clone:
    root: Path
    port: int
    env: dict[str, str]
    serve_seconds: float  # wall clock, from start to listening
    serve_cpu_seconds: float  # CPU time of the script and everything it ran (venv, pip), to listening
    serve_log: str


def _cpu_seconds(pid: int) -> float:
    """User + system time of a process and of the children it has waited for (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    ticks = sum(int(fields[i]) for i in (11, 12, 13, 14))  # utime, stime, cutime, cstime
    return ticks / os.sysconf("SC_CLK_TCK")


def _clean_env() -> dict[str, str]:
    """This process's environment without its virtualenv, so only the clone's `.venv` can provide
    `skillwire` (a newcomer's shell has none)."""
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME")}
    here = [str(REPO_ROOT / ".venv" / "bin"), str(Path(sys.executable).parent)]
    env["PATH"] = os.pathsep.join(p for p in env.get("PATH", "").split(os.pathsep) if p not in here)
    return env


def _wait_for(log: Path, text: str, process: subprocess.Popen[bytes], timeout: float) -> float:
    started = time.monotonic()
    while time.monotonic() - started < timeout:
        if text in log.read_text(errors="replace"):
            return time.monotonic() - started
        if process.poll() is not None:
            raise AssertionError(f"exited with {process.returncode}:\n{log.read_text(errors='replace')}")
        time.sleep(0.1)
    raise AssertionError(f"no {text!r} within {timeout} s:\n{log.read_text(errors='replace')}")


@pytest.fixture(scope="module")
def clone(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Clone]:
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    if subprocess.run(["git", "-C", str(REPO_ROOT), "rev-parse"], capture_output=True).returncode != 0:
        pytest.skip("not a git checkout: nothing to clone")
    base = tmp_path_factory.mktemp("fresh")
    root = base / "skillwire"
    subprocess.run(["git", "clone", "--quiet", str(REPO_ROOT), str(root)], check=True, timeout=120)
    assert not (base / "shared").exists()
    assert not (root / ".venv").exists()
    env = _clean_env()
    port = free_port()
    log = base / "serve.log"
    with log.open("wb") as out:
        process = subprocess.Popen(
            ["./scripts/serve", "--http", f"127.0.0.1:{port}"],
            cwd=root,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        seconds = _wait_for(log, "listening on", process, timeout=300)
        cpu = _cpu_seconds(process.pid) if Path("/proc").is_dir() else 0.0
        print(f"\n./scripts/serve on a fresh clone: listening after {seconds:.1f} s ({cpu:.1f} s of CPU)")
        yield Clone(root, port, env, seconds, cpu, log.read_text(errors="replace"))
    finally:
        stop_process(process)


def test_scripts_serve_on_a_fresh_clone_listens_within_60_s_saying_what_it_installs(clone: Clone) -> None:
    # The work itself (venv, pip from the local index, start-up) must fit well inside the deadline;
    # the wall clock is held to it unless the machine runs more than twice as many jobs as it has
    # cores (then the number measures the other jobs, and is only printed).
    # Three quarters of the deadline: the runtime set now also installs prometheus-client and
    # opentelemetry-api (issue 23), and 31 s of CPU was measured for the whole first run on a loaded machine.
    assert clone.serve_cpu_seconds < SERVE_DEADLINE * 0.75, f"{clone.serve_cpu_seconds:.1f} s of CPU"
    overloaded = os.getloadavg()[0] > 2 * (os.cpu_count() or 1)
    if not overloaded:
        assert clone.serve_seconds < SERVE_DEADLINE, f"{clone.serve_seconds:.1f} s:\n{clone.serve_log}"
    lines = [line for line in clone.serve_log.splitlines() if line.startswith("skillwire")]
    assert lines[0].startswith("skillwire setup: creating ")
    assert lines[1].startswith("skillwire setup: installing skillwire and what serving needs")
    assert any(line.startswith("skillwire setup: done in ") for line in lines)
    assert lines[-1] == f"skillwire: listening on http://127.0.0.1:{clone.port}/mcp"
    python = clone.root / ".venv" / "bin" / "python"
    for dev_tool in ("pytest", "ruff", "mypy", "fastmcp", "matplotlib"):  # serving needs none of them
        found = subprocess.run([python, "-c", f"import {dev_tool}"], capture_output=True, env=clone.env)
        assert found.returncode != 0, f"{dev_tool} was installed by ./scripts/serve"


def test_a_second_scripts_serve_installs_nothing(clone: Clone, tmp_path: Path) -> None:
    port = free_port()
    log = tmp_path / "again.log"
    with log.open("wb") as out:
        process = subprocess.Popen(
            ["./scripts/serve", "--http", f"127.0.0.1:{port}", "--no-watch"],
            cwd=clone.root,
            env=clone.env,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        _wait_for(log, "listening on", process, timeout=60)
    finally:
        stop_process(process)
    assert "skillwire setup" not in log.read_text()


# -- the README's commands ---------------------------------------------------------------------------------------


def readme_commands(readme: str) -> list[tuple[int, str]]:
    """(block number, command) for every command line of every ```bash block, comments removed."""
    commands: list[tuple[int, str]] = []
    for number, block in enumerate(re.findall(r"```bash\n(.*?)```", readme, re.DOTALL)):
        for line in block.splitlines():
            command = _strip_comment(line).strip()
            if command:
                commands.append((number, command))
    return commands


def _strip_comment(line: str) -> str:
    """The line without its trailing `# comment` (a `#` outside quotes, after whitespace)."""
    quote = None
    for index, char in enumerate(line):
        if quote:
            quote = None if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char == "#" and (index == 0 or line[index - 1].isspace()):
            return line[:index]
    return line


def _needs_network(command: str) -> bool:
    for url in re.findall(r"[a-z][a-z0-9+.-]*://[^\s'\"]+", command):
        parsed = urlparse(url.replace("…", ""))
        if parsed.scheme in ("http", "https") and parsed.hostname not in ("127.0.0.1", "localhost", "::1"):
            return True
    return False


def skip_reason(command: str, *, after_network: bool) -> str | None:
    """Why a README command is not run here, or None when it is (the rule in the module docstring)."""
    if command.startswith(LONG_RUNNING):
        return "long-running (a server, the test suite or the benchmarks)"
    if _needs_network(command):
        return "needs the network"
    if after_network:
        return "builds on a command that needs the network"
    if any(word.startswith("~/") for word in command.split()):
        return "uses the reader's own files or keys (a ~/ path)"
    if not command.startswith(OUR_PROGRAMS):
        return "a program this project does not provide"
    return None


def plan(readme: str) -> list[tuple[str, str | None]]:
    planned: list[tuple[str, str | None]] = []
    network_block: int | None = None
    for block, command in readme_commands(readme):
        reason = skip_reason(command, after_network=network_block == block)
        if reason == "needs the network":
            network_block = block
        planned.append((command, reason))
    return planned


def test_the_rule_runs_the_usage_commands_and_skips_servers_and_the_network() -> None:
    steps = plan((REPO_ROOT / "README.md").read_text(encoding="utf-8"))
    planned = dict(steps)
    assert planned["./scripts/serve"] is not None
    assert planned["skillwire ls http://127.0.0.1:8765/mcp"] is None
    assert planned["skillwire lint src/skillwire/examples/skills"] is None
    assert planned["skillwire ls -- skillwire serve --stdio"] is None
    assert planned["source .venv/bin/activate"] is None
    assert skip_reason("skillwire ls https://skills.example.com/mcp", after_network=False) == "needs the network"
    assert skip_reason("claude mcp add skills -- skillwire bridge", after_network=False) is not None
    assert sum(reason is None for _, reason in steps) >= 10


def _expectation(command: str, clone: Clone) -> tuple[str, bytes | str] | None:
    """What the README's comment promises, per subcommand: (stream, text it must contain)."""
    words = shlex.split(command)
    if words[0] != "skillwire":
        return None
    sub = words[1]
    if sub == "ls":
        return ("out", "skill://pdf-processing/SKILL.md")
    if sub == "get":
        return ("out", "uri: skill://pdf-processing/SKILL.md")
    if sub == "cat":
        return ("bytes", (clone.root / "src/skillwire/examples/skills/pdf-processing/references/FORMS.md").read_bytes())
    if sub == "pull" and "--check" in words:
        return ("out", "up to date")
    if sub == "pull":
        return ("out", "pulled 5 of 5 skills")
    if sub == "check":
        return ("out", "check passed")
    if sub == "lint":
        return ("out", "0 errors")
    return None


def test_every_runnable_readme_command_works_as_written_on_the_fresh_clone(clone: Clone) -> None:
    readme = (clone.root / "README.md").read_text(encoding="utf-8")
    ran: list[str] = []
    skipped: list[str] = []
    for command, reason in plan(readme):
        if reason is not None:
            skipped.append(f"{command}  ({reason})")
            continue
        actual = command.replace(README_PORT, f"127.0.0.1:{clone.port}")
        shell = actual if command.startswith("source ") else f"source .venv/bin/activate && {actual}"
        result = subprocess.run(["bash", "-c", shell], cwd=clone.root, env=clone.env, capture_output=True, timeout=180)
        err = result.stderr.decode(errors="replace")
        assert result.returncode == 0, f"{command}\n{err}"
        assert "Traceback" not in err, command
        expected = _expectation(command, clone)
        if expected is not None:
            stream, text = expected
            if stream == "bytes":
                assert result.stdout == text, command
            else:
                assert str(text) in result.stdout.decode(), f"{command}\n{result.stdout.decode()}"
        ran.append(command)
    print("\nran:\n  " + "\n  ".join(ran) + "\nskipped:\n  " + "\n  ".join(skipped))
    assert (clone.root / "vendor" / "skills.lock").is_file()  # the README's pull wrote its copy


def test_python_dash_m_skillwire_works_in_the_clone(clone: Clone) -> None:
    result = subprocess.run(
        [".venv/bin/python", "-m", "skillwire", "--version"], cwd=clone.root, env=clone.env, capture_output=True
    )
    assert result.returncode == 0
    assert result.stdout.decode().startswith("skillwire ")
