"""What `skillwire lint` and `skillwire check` report: one `Finding` type, one `Rule` type, and the
`RuleSet` registry each command keeps its rule ids in.

The two commands look at different things (files on disk, a server on the wire) but report the same
way: a stable rule id, a severity, a message, and where (a file and line for lint, a skill and URI for
check). A finding can only be made through a `RuleSet`, so an id that is not registered fails at the
call, and the severity (and check's section tag) always come from the registry, never from the caller.

Each command's JSON record (`RuleSet.record`) and severity words are part of its stable output:
lint says error/warning/info, check says failure/warning. They stay as they are; `Severity` names
all four, and `blocking()` says which ones fail a run.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Literal, NamedTuple

__all__ = ["Finding"]

#: "error" (lint) and "failure" (check) are the blocking level of each command: a folder that
#: `skillwire serve` would not publish as written, a server that breaks a MUST of SEP-2640.
Severity = Literal["error", "failure", "warning", "info"]
BLOCKING: frozenset[Severity] = frozenset({"error", "failure"})


class Rule(NamedTuple):
    """One rule of a command: how bad breaking it is and what it checks (one line).

    A tuple so that `RULES[id][0]` is the severity, as it has always been for lint's table.
    """

    severity: Severity
    summary: str
    section: str = ""  # check: the SEP-2640 requirement tag ("[Res]"); lint has none
    since: str | None = None  # check: the protocol version that defines the rule (None: every version)

    def applies_to(self, protocol_version: str | None) -> bool:
        """Whether a session at `protocol_version` is bound by the rule (unknown version: every rule)."""
        # Protocol versions are ISO dates, so text order is time order.
        return self.since is None or protocol_version is None or protocol_version >= self.since


@dataclass(frozen=True)
class Finding:
    """One broken rule: which (`rule`), how bad (`severity`), why (`message`), where, and how to fix it.

    Lint fills `file` and `line` (1-based, None when no line applies), `suggestion`, and `skill` (the
    skill folder, None for PATH-wide findings); check fills `skill` (the entry's URI or "server"), `uri`
    (the file, directory or probe URI concerned) and `section`, and leaves `file` empty (a server has
    no local file).
    """

    file: str
    line: int | None
    severity: Severity
    rule: str
    message: str
    suggestion: str = ""
    skill: str | None = None
    uri: str | None = None
    section: str = ""


_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def printable(text: str) -> str:
    """`text` safe for one line of output: control characters and undecodable bytes escaped."""
    text = text.encode("utf-8", "backslashreplace").decode("utf-8")
    return _CONTROL.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"), text)


class RuleSet(Mapping[str, Rule]):
    """A command's rules by id (ids are stable: scripts and CI filters rely on them), and the only way
    to make a `Finding` under them.

    `record` is the key order of the command's JSON record of a finding. `one_line` escapes control
    characters in a finding's file, message and suggestion: lint quotes file names and YAML text that
    may hold any character, and prints one finding per line.
    """

    def __init__(self, rules: Mapping[str, Rule], *, record: tuple[str, ...] = (), one_line: bool = False) -> None:
        self._rules = dict(rules)
        self.record_keys = record
        self.one_line = one_line

    def __getitem__(self, rule: str) -> Rule:
        return self._rules[rule]

    def __iter__(self) -> Iterator[str]:
        return iter(self._rules)

    def __len__(self) -> int:
        return len(self._rules)

    def finding(
        self,
        rule: str,
        message: str,
        *,
        file: str = "",
        line: int | None = None,
        suggestion: str = "",
        skill: str | None = None,
        uri: str | None = None,
    ) -> Finding:
        """A finding under `rule`, with the registry's severity and section (KeyError: not a rule here)."""
        entry = self._rules[rule]
        if self.one_line:
            file, message, suggestion = printable(file), printable(message), printable(suggestion)
        return Finding(file, line, entry.severity, rule, message, suggestion, skill, uri, entry.section)

    def record(self, finding: Finding) -> dict[str, object]:
        """The command's JSON record of `finding`."""
        return {key: getattr(finding, key) for key in self.record_keys}


def blocking(severity: Severity) -> bool:
    """Whether a finding of this severity fails the run (lint's error, check's failure)."""
    return severity in BLOCKING
