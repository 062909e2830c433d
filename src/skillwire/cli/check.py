"""`skillwire check SERVER`: audit any skills server against SEP-2640 and report every rule it breaks.

    skillwire check http://127.0.0.1:8765/mcp
    skillwire check --json -- python -m my_server

The audit itself (`skillwire.checks.audit`) works on the raw wire: capability declaration, every
`skills/list` page, every entry's shape, URI and name rules, limits, `skills/get` of every listed skill,
one `resources/read` of every listed file (size, digest, SKILL.md frontmatter), directory reads against
the manifests (when `directoryRead: true`), `resources/list` against the manifests, cache attributes,
and the error codes for a skill, a file and a directory that cannot exist.

Output:

* the default report is grouped by skill (`server` first), one line per finding:
  `FAIL|WARN  RULE-ID  [Section]  message` (at most 5 per skill and rule, then "… and N more like
  these"), then a one-line summary. Colour and a progress bar (on stderr) only on a terminal;
  plain, stable, unwrapped text when piped.
* `--json` prints JSON Lines on stdout and nothing else: one object per finding,
  `{"severity", "rule", "section", "skill", "uri", "message"}` (`skill` is the entry's URI or
  `"server"`, `uri` the file, directory or probe URI concerned, or null), then always one final
  summary object, so a clean server prints one line too:
  `{"summary": true, "ok", "failures", "warnings", "skills", "skills_without_findings", "pages",
  "files_read", "directories_read", "protocol_version", "host_limits"}`. A reader tells it from a finding by
  its `summary` key. `host_limits` is what a host with Claude Code 2.1.337's listing limits (100 skills,
  20 pages, 512 KiB of entries per server, `core/host_limits.py`) keeps: `{host, limits, listed, listed_bytes,
  kept, kept_bytes, pages_read, stopped, dropped}` (`dropped`: every URI it would not list, in order; null when
  the listing could not be walked). The report says the same in one line under its counts.
* `--quiet` prints only the failures, one line each: `SKILL: FAIL RULE-ID [Section] message`.
* `--list-rules` prints every rule id with its severity, section and meaning.

Exit status: 0 when there is no failure (warnings allowed), 1 when there is at least one failure,
2 for a command-line mistake; a server that cannot be reached is a one-line error (exit 1), worded as
every other command words it (`skillwire.cli.connect.explain_client_failure`).
"""

from __future__ import annotations

import argparse
import json
from contextlib import nullcontext
from itertools import groupby
from typing import Any

from rich.text import Text

from skillwire.checks.audit import RULES, SERVER, AuditResult, audit
from skillwire.checks.audit.records import HostKeeps
from skillwire.checks.findings import Finding
from skillwire.cli.args import ServerTarget, UsageError, add_output_arguments, add_server_arguments, server_target
from skillwire.cli.connect import run_client
from skillwire.cli.output import Output
from skillwire.client.requests import send_raw
from skillwire.client.skills import SkillsClient
from skillwire.core.display import escape

_LABEL = {"failure": "FAIL", "warning": "WARN"}
SAME_RULE_SHOWN = 5  # per skill and rule in the report; --json and --quiet list every finding
_STYLE = {"failure": "bold red", "warning": "yellow"}


def add_parser(commands: Any) -> None:
    p: argparse.ArgumentParser = commands.add_parser(
        "check",
        help="audit a skills server against SEP-2640",
        description=(
            "Audit a skills server against SEP-2640: capability declaration, pagination, every entry, "
            "URI and name rules, limits, every listed file (size, digest, frontmatter), directory reads, "
            "cache attributes and error codes. Exit status 1 when anything MUST-level fails. "
            "--json prints JSON Lines: one object per finding {severity, rule, section, skill, uri, message}, "
            "then always a final summary object {summary: true, ok, failures, warnings, skills, "
            "skills_without_findings, pages, files_read, directories_read, protocol_version, host_limits}: "
            "host_limits is what a host with Claude Code's listing limits (100 skills, 20 pages, 512 KiB of "
            "entries) keeps and which skills it drops."
        ),
    )
    add_server_arguments(p)
    add_output_arguments(p)
    p.add_argument("--concurrency", type=int, default=8, metavar="N", help="requests in flight (default 8)")
    p.add_argument("--max-pages", type=int, default=1000, metavar="N", help="skills/list page limit (default 1000)")
    p.add_argument("--list-rules", action="store_true", help="print every rule id and exit")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    out = Output(quiet=args.quiet, json_mode=args.json)
    if args.list_rules:
        print_rules(out)
        return 0
    if args.concurrency < 1:
        raise UsageError(f"--concurrency must be at least 1, got {args.concurrency}")
    if args.timeout <= 0:
        raise UsageError(f"--timeout must be positive, got {args.timeout}")
    if args.max_pages < 1:
        raise UsageError(f"--max-pages must be at least 1, got {args.max_pages}")
    target = server_target(args)

    async def body(skills: SkillsClient) -> AuditResult:
        return await _check(skills, args, out)

    # The same connection and the same one-line explanation of a failure as ls, get, cat and pull.
    result = run_client(target, body)
    render(out, target, result)
    return 1 if result.failures else 0


async def _check(skills: SkillsClient, args: argparse.Namespace, out: Output) -> AuditResult:
    client = skills.client
    capabilities = client.server_capabilities.model_dump(by_alias=True, exclude_none=True, mode="json")
    bar = None if out.json_mode else out.progress("checking", None)

    async def send(request: Any) -> dict[str, Any]:
        return await send_raw(client, request)

    def progress(done: int, total: int) -> None:
        if bar is not None:
            bar.update(bar.task_ids[0], completed=done, total=total)

    with bar if bar is not None else nullcontext():
        return await audit(
            send,
            capabilities,
            protocol_version=client.protocol_version,
            concurrency=args.concurrency,
            request_timeout=args.timeout,
            max_pages=args.max_pages,
            progress=progress,
        )


# -- rendering -------------------------------------------------------------------------------------------------


def finding_line(finding: Finding) -> str:
    """The plain text of one finding in the report (without the skill heading)."""
    return f"{_LABEL[finding.severity]}  {finding.rule}  {finding.section}  {finding.message}"


def summary_line(result: AuditResult) -> str:
    failures, warnings = len(result.failures), len(result.warnings)
    with_findings = {f.skill for f in result.findings} - {SERVER}
    total = result.stats.skills
    verdict = "check failed" if failures else "check passed"
    counts = f"{failures} failure{'s' if failures != 1 else ''}, {warnings} warning{'s' if warnings != 1 else ''}"
    return f"{verdict}: {counts}; {total - len(with_findings)} of {total} skills without findings"


HOST_DROPPED_SHOWN = 3  # dropped skills named in the report; --json lists every one


def host_line(host: HostKeeps) -> str:
    """What a host with Claude Code's listing limits keeps of this server's listing, in one line."""
    cut, limits = host.cut, host.cut.limits
    head = f"{limits.host} (per server: {limits.describe()})"
    if not cut.cut:
        return f"{head} keeps all {host.listed:,} listed skills ({host.listed_bytes:,} bytes of entries)"
    shown = ", ".join(escape(uri, 200) for uri in host.dropped[:HOST_DROPPED_SHOWN])
    more = len(host.dropped) - HOST_DROPPED_SHOWN
    return (
        f"{head} keeps {cut.kept:,} of {host.listed:,} listed skills ({cut.kept_bytes:,} of {host.listed_bytes:,} "
        f"bytes of entries; {cut.why}) and drops {len(host.dropped):,}: {shown}"
        + (f" and {more:,} more" if more > 0 else "")
    )


def host_record(host: HostKeeps) -> dict[str, Any]:
    cut = host.cut
    return {
        "host": cut.limits.host,
        "limits": {"skills": cut.limits.skills, "pages": cut.limits.pages, "entry_bytes": cut.limits.entry_bytes},
        "listed": host.listed,
        "listed_bytes": host.listed_bytes,
        "kept": cut.kept,
        "kept_bytes": cut.kept_bytes,
        "pages_read": cut.pages,
        "stopped": cut.stopped,
        "dropped": host.dropped,
    }


def summary_record(result: AuditResult) -> dict[str, Any]:
    """The last line of `--json`: the verdict and the counts behind it."""
    stats = result.stats
    with_findings = {f.skill for f in result.findings} - {SERVER}
    return {
        "summary": True,
        "ok": not result.failures,
        "failures": len(result.failures),
        "warnings": len(result.warnings),
        "skills": stats.skills,
        "skills_without_findings": stats.skills - len(with_findings),
        "pages": stats.pages,
        "files_read": stats.files_read,
        "directories_read": stats.directories_read,
        "protocol_version": stats.protocol_version,
        "host_limits": None if stats.host is None else host_record(stats.host),
    }


def render(out: Output, target: ServerTarget, result: AuditResult) -> None:
    if out.json_mode:
        records = [RULES.record(f) for f in result.findings] + [summary_record(result)]
        out.write("".join(json.dumps(record, ensure_ascii=False) + "\n" for record in records))
        return
    if out.quiet:
        out.write("".join(f"{f.skill}: {finding_line(f)}\n" for f in result.failures))
        return
    stats = result.stats
    console = out.console
    console.print(Text(f"skillwire check {target.label}", style="bold"))
    version = f"protocol {stats.protocol_version}, " if stats.protocol_version else ""
    console.print(
        Text(
            f"{version}{stats.skills} skills on {stats.pages} page{'s' if stats.pages != 1 else ''}, "
            f"{stats.files_read} files read, "
            + (f"{stats.directories_read} directories read" if stats.directory_read else "no directoryRead"),
            style="dim",
        )
    )
    if stats.host is not None:
        console.print(Text(host_line(stats.host), style="yellow" if stats.host.cut.cut else "dim"))
    for skill, in_skill in groupby(result.findings, key=lambda f: f.skill):
        console.print()
        console.print(Text(skill, style="bold"))
        for _, same_rule in groupby(in_skill, key=lambda f: f.rule):
            findings = list(same_rule)
            for finding in findings[:SAME_RULE_SHOWN]:
                console.print(_line(finding, finding.message))
            if len(findings) > SAME_RULE_SHOWN:
                more = len(findings) - SAME_RULE_SHOWN
                console.print(_line(findings[0], f"… and {more} more like these (--json lists every finding)"))
    console.print()
    console.print(Text(summary_line(result), style="bold red" if result.failures else "bold green"))


def _line(finding: Finding, message: str) -> Text:
    line = Text("  ")
    line.append(_LABEL[finding.severity], style=_STYLE[finding.severity])
    line.append("  ")
    line.append(finding.rule, style="cyan")
    line.append("  ")
    line.append(finding.section, style="dim")
    line.append("  ")
    line.append(message)
    return line


def print_rules(out: Output) -> None:
    if out.json_mode:
        out.write(
            "".join(
                json.dumps(
                    {"rule": rid, "severity": r.severity, "section": r.section, "summary": r.summary, "since": r.since}
                )
                + "\n"
                for rid, r in RULES.items()
            )
        )
        return
    width = max(map(len, RULES))
    out.write(
        "".join(
            f"{rid:<{width}}  {_LABEL[r.severity]}  {r.section:<9}  {r.summary}"
            + (f" (protocol {r.since} and later)" if r.since else "")
            + "\n"
            for rid, r in RULES.items()
        )
    )
