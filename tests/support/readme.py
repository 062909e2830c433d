"""The README's shell commands, and which of them a test runs: one rule for every README test.

Every command of every ```bash block runs somewhere, or has a reason it does not, said here:
- the usage commands run as written on a fresh clone (tests/e2e/test_readme_fresh_clone.py);
- a block that names one of `RUN_ELSEWHERE`'s markers is run whole by the test named there;
- the rest is not run, for the reason `skip_reason` gives (a server, the network, the reader's own files,
  another program); every `skillwire` command among them is still parsed by the current command line
  (tests/e2e/test_readme.py), so a flag the README names and the tool lost fails a test.
"""

from __future__ import annotations

import re
from urllib.parse import urlparse

LONG_RUNNING = (
    "./scripts/serve",
    "./scripts/test",
    "skillwire serve",
    "skillwire bridge",
    "skillwire browse",
    ".venv/bin/python -m bench",
)
OUR_PROGRAMS = ("skillwire", "./scripts/", ".venv/bin/", "source")

# A block holding the marker is run, as written, by that test (it needs what a fresh clone's shell lacks).
RUN_ELSEWHERE = {
    "weed mini": "tests/e2e/test_readme.py::test_the_try_it_locally_block_runs_as_written (own network namespace)",
    "skillwire trust add acme": "tests/e2e/test_signing.py::test_the_readme_trust_example_ends_signed_as_written",
}


def bash_blocks(readme: str) -> list[list[str]]:
    """Each ```bash block's command lines, comments removed."""
    blocks = []
    for block in re.findall(r"```bash\n(.*?)```", readme, re.DOTALL):
        blocks.append([command for line in block.splitlines() if (command := strip_comment(line).strip())])
    return blocks


def readme_commands(readme: str) -> list[tuple[int, str]]:
    """(block number, command) for every command line of every ```bash block, comments removed."""
    return [(number, command) for number, block in enumerate(bash_blocks(readme)) for command in block]


def strip_comment(line: str) -> str:
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


def needs_network(command: str) -> bool:
    for url in re.findall(r"[a-z][a-z0-9+.-]*://[^\s'\"]+", command):
        parsed = urlparse(url.replace("…", ""))
        if parsed.scheme in ("http", "https") and parsed.hostname not in ("127.0.0.1", "localhost", "::1"):
            return True
    return False


def skip_reason(command: str, *, after_network: bool) -> str | None:
    """Why a README command is not run on the fresh clone, or None when it is."""
    if command.startswith(LONG_RUNNING):
        return "long-running (a server, the test suite or the benchmarks)"
    if needs_network(command):
        return "needs the network"
    if after_network:
        return "builds on a command that needs the network"
    if any(word.startswith("~/") for word in command.split()):
        return "uses the reader's own files or keys (a ~/ path)"
    if not command.startswith(OUR_PROGRAMS):
        return "a program this project does not provide"
    return None


def plan(readme: str) -> list[tuple[str, str | None]]:
    """Every README command and why the fresh clone does not run it (None: it does)."""
    planned: list[tuple[str, str | None]] = []
    for block in bash_blocks(readme):
        elsewhere = next((test for marker, test in RUN_ELSEWHERE.items() if any(marker in c for c in block)), None)
        network = False
        for command in block:
            reason = f"run by {elsewhere}" if elsewhere else skip_reason(command, after_network=network)
            network = network or reason == "needs the network"
            planned.append((command, reason))
    return planned
