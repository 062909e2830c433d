"""`skillwire lint PATH...`: check local skill folders before publishing them.

Agent Skills rules, the SEP-2640 serving rules (as `skillwire serve` applies them: same discovery,
ignore rules and limits) and interop warnings for frontmatter that YAML 1.1 and 1.2 parsers read
differently. Exit status: 1 when there is an error (or a warning, with `--strict`), else 0; 2 for a
command line that cannot work. Info findings never fail.

Formats: `text` (grouped by skill; `path:line: severity rule: message`, then the suggestion),
`json` (an array of findings) and `github` (workflow commands that become PR annotations).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from typing import Any

from rich.text import Text

from skillwire.catalog.git import is_git_spec
from skillwire.checks.findings import Finding
from skillwire.checks.lint import RULES, LintReport, lint_path
from skillwire.cli.args import UsageError, add_output_arguments
from skillwire.cli.output import Output
from skillwire.core.errors import LintPathError
from skillwire.core.uri import DEFAULT_SCHEME

FORMATS = ("text", "json", "github")
_STYLE = {"error": "bold red", "warning": "yellow", "info": "cyan"}
_GITHUB_COMMAND = {"error": "error", "warning": "warning", "info": "notice"}


def add_parser(commands: Any) -> None:
    p: argparse.ArgumentParser = commands.add_parser(
        "lint",
        help="check skill folders before publishing",
        description=(
            "Check every skill under PATH (a skill folder, a folder of skills at any depth, or a SKILL.md) "
            "against the Agent Skills rules and the SEP-2640 serving rules, with interop warnings for "
            "frontmatter that YAML 1.1 and 1.2 parsers read differently. PATH=PREFIX works as in `serve`. "
            "Exit status 1 on errors (and on warnings with --strict)."
        ),
    )
    p.add_argument("paths", nargs="*", metavar="PATH", help="skill folders, folders of skills, or SKILL.md files")
    p.add_argument("--strict", action="store_true", help="treat warnings as failures")
    p.add_argument(
        "--format",
        choices=FORMATS,
        default=None,
        help="text (default), json (an array of findings) or github (workflow annotations)",
    )
    p.add_argument("--list-rules", action="store_true", help="print every rule id with its severity and exit")
    add_output_arguments(p)
    p.set_defaults(run=run)


def failed(findings: Sequence[Finding], *, strict: bool) -> bool:
    return any(f.severity == "error" or (strict and f.severity == "warning") for f in findings)


def format_text_line(finding: Finding) -> str:
    where = finding.file if finding.line is None else f"{finding.file}:{finding.line}"
    return f"{where}: {finding.severity} {finding.rule}: {finding.message}"


def _github_escape(text: str, *, prop: bool = False) -> str:
    text = text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    return text.replace(":", "%3A").replace(",", "%2C") if prop else text


def format_github_line(finding: Finding) -> str:
    props = [f"file={_github_escape(finding.file, prop=True)}"]
    if finding.line is not None:
        props.append(f"line={finding.line}")
    props.append(f"title={_github_escape(finding.rule, prop=True)}")
    message = _github_escape(f"{finding.message}\nSuggestion: {finding.suggestion}")
    return f"::{_GITHUB_COMMAND[finding.severity]} {','.join(props)}::{message}"


def summary(reports: Sequence[LintReport], findings: Sequence[Finding], *, strict: bool) -> str:
    skills = sum(len(r.skills) for r in reports)
    counts = {s: sum(1 for f in findings if f.severity == s) for s in ("error", "warning", "info")}
    with_problems = len({f.skill for f in findings if f.skill is not None and f.severity != "info"})
    parts = [
        f"{counts['error']} error{'s' * (counts['error'] != 1)}",
        f"{counts['warning']} warning{'s' * (counts['warning'] != 1)}",
    ]
    if counts["info"]:
        parts.append(f"{counts['info']} info")
    verdict = "FAILED" if failed(findings, strict=strict) else "ok"
    return (
        f"skillwire lint: {skills} skill{'s' * (skills != 1)} checked, {with_problems} with problems: "
        f"{', '.join(parts)} ({verdict}{', strict' if strict else ''})"
    )


def _print_line(out: Output, text: str, style: str | None = None) -> None:
    if out.is_terminal:
        out.console.print(Text(text, style=style or ""), soft_wrap=True)
    else:
        out.write(text + "\n")


def print_text(out: Output, reports: Sequence[LintReport], findings: Sequence[Finding], *, strict: bool) -> None:
    shown = [f for f in findings if f.severity == "error"] if out.quiet else list(findings)
    uris = {s.folder: s.uri for r in reports for s in r.skills}
    groups: dict[str, list[Finding]] = {}
    for finding in shown:
        groups.setdefault(finding.skill or finding.file, []).append(finding)
    for index, (group, members) in enumerate(groups.items()):
        if index:
            _print_line(out, "")
        uri = uris.get(group)
        _print_line(out, f"{group} ({uri})" if uri else group, "bold")
        for finding in members:
            _print_line(out, format_text_line(finding), _STYLE[finding.severity])
            _print_line(out, f"    suggestion: {finding.suggestion}", "dim")
    if not out.quiet:
        if groups:
            _print_line(out, "")
        _print_line(out, summary(reports, findings, strict=strict))


def print_rules(out: Output) -> None:
    width = max(len(rule) for rule in RULES)
    for rule, entry in RULES.items():
        out.write(f"{rule:<{width}}  {entry.severity:<7}  {entry.summary}\n")


def _order(report: LintReport) -> list[Finding]:
    """Findings grouped by skill in discovery order (PATH-wide ones last), then by file and line."""
    rank = {s.folder: i for i, s in enumerate(report.skills)}
    return sorted(
        report.findings,
        key=lambda f: (
            rank.get(f.skill or "", len(rank)),
            f.skill or "",
            f.file.count("/") if f.skill is None else 0,
            f.file,
            f.line or 0,
            f.rule,
        ),
    )


def _lint(spec: str) -> LintReport:
    """Lint a folder, or a git root (`git+URL@REF#SUBDIR=PREFIX`) read from git's objects at the commit its
    ref names (nothing checked out); a SUBDIR that is itself a skill is linted under the SUBDIR's name."""
    if not is_git_spec(spec):
        return lint_path(spec)
    from skillwire.catalog.git import GitError
    from skillwire.catalog.git_catalog import GitRootSpec, read_git_root
    from skillwire.cli.roots import parse_root_specs

    (parsed,) = parse_root_specs([spec])
    assert isinstance(parsed, GitRootSpec)  # `is_git_spec` above
    try:
        tree = read_git_root(parsed)
    except GitError as exc:
        raise UsageError(str(exc)) from None
    print(f"skillwire: linting {parsed.source} at commit {tree.commit}", file=sys.stderr)
    subdir = parsed.source.subdir
    name = subdir[-1] if subdir else parsed.source.name
    placed = (
        "."
        if not parsed.prefix and parsed.scheme == DEFAULT_SCHEME
        else f".={parsed.scheme}://{'/'.join(parsed.prefix)}"
    )
    return lint_path(placed, folder_name=name, tree=tree)


def run(args: argparse.Namespace) -> int:
    fmt = args.format or ("json" if args.json else "text")
    if args.json and fmt != "json":
        raise UsageError(f"--json and --format {fmt} disagree; give one of them")
    out = Output(quiet=args.quiet, json_mode=fmt == "json")
    if args.list_rules:
        print_rules(out)
        return 0
    if not args.paths:
        raise UsageError("no PATH given: name a skill folder or a folder of skills, e.g. `skillwire lint ./skills`")
    reports: list[LintReport] = []
    for spec in args.paths:
        try:
            reports.append(_lint(spec))
        except LintPathError as exc:
            raise UsageError(f"lint: {exc}") from None
    findings = [f for report in reports for f in _order(report)]
    if fmt == "json":
        out.write(json.dumps([RULES.record(f) for f in findings], indent=2, ensure_ascii=False) + "\n")
    elif fmt == "github":
        for finding in findings:
            if not out.quiet or finding.severity == "error":
                out.write(format_github_line(finding) + "\n")
        if not out.quiet:
            out.stderr.write(summary(reports, findings, strict=args.strict) + "\n")
    else:
        print_text(out, reports, findings, strict=args.strict)
    return 1 if failed(findings, strict=args.strict) else 0
