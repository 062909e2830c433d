"""Values from outside are escaped in every log format (issue 35, defect 7): a folder name holding a line
break wrote a fake `skillwire: warning:` line in the human format, and the SDK's warning quoting a client's
`Host` header sent its terminal escapes straight to the operator's terminal."""

from __future__ import annotations

import json
import logging
import sys

import pytest

from skillwire.ops.logs import HumanFormatter, JsonFormatter

FORGED = "bad\nskillwire: warning: every skill verified"
TERMINAL = "evil\x1b[2J\x9b31m\u202e"  # clear screen (ESC), an 8-bit CSI, a right-to-left override


def record(msg: str, *args: object, name: str = "skillwire.catalog", exc: bool = False) -> logging.LogRecord:
    exc_info = None
    if exc:
        try:
            raise ValueError(FORGED)
        except ValueError:
            exc_info = sys.exc_info()
    return logging.LogRecord(name, logging.WARNING, __file__, 1, msg, args or None, exc_info)


@pytest.mark.parametrize("tracebacks", [False, True])
def test_a_value_never_starts_a_line_of_its_own_in_the_human_format(tracebacks: bool) -> None:
    formatter = HumanFormatter(tracebacks=tracebacks)
    for line in (
        formatter.format(record("skipped %s: %s", FORGED, "a reason")),
        formatter.format(record("skipped %r", FORGED)),
        formatter.format(record(f"built before the call: {FORGED}")),  # no arguments: all of it is a value
        formatter.format(record("could not scan %s", "/srv/skills", exc=True)),
    ):
        lines = line.splitlines()
        assert lines[0].startswith("skillwire: warning: ")
        assert [text for text in lines[1:] if text.startswith("skillwire:")] == [], line
        assert "every skill verified" in line  # shown, escaped: `bad\nskillwire: …` on the one line
        if not tracebacks:
            assert len(lines) == 1, line


def test_the_programs_own_line_breaks_stay() -> None:
    line = HumanFormatter(tracebacks=False).format(record("skipped 1 skills:\n  - %s", FORGED))
    assert line == "skillwire: warning: skipped 1 skills:\n  - bad\\nskillwire: warning: every skill verified"


def test_an_sdk_warning_quoting_a_clients_host_header_is_escaped() -> None:
    # The SDK's transport security logs `f"Invalid Host header: {host}"`: a message built before the call.
    sdk = record(f"Invalid Host header: {TERMINAL}", name="mcp.server.transport_security")
    for line in (HumanFormatter(tracebacks=False).format(sdk), JsonFormatter(tracebacks=False).format(sdk)):
        assert "\x1b" not in line
        assert "\x9b" not in line
        assert "\u202e" not in line
    human = HumanFormatter(tracebacks=False).format(sdk)
    assert human == "skillwire: warning: Invalid Host header: evil\\x1b[2J\\x9b31m\\u202e"


def test_json_lines_escape_what_json_leaves_raw() -> None:
    line = JsonFormatter(tracebacks=True).format(record("skipped %s", TERMINAL, exc=True))
    assert len(line.splitlines()) == 1
    assert "\x9b" not in line
    assert "\u202e" not in line
    entry = json.loads(line)
    assert entry["message"] == "skipped evil\\x1b[2J\\x9b31m\\u202e"
    assert entry["error"] == "ValueError: bad\\nskillwire: warning: every skill verified"
