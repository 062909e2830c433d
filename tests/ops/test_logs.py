"""`ops.logs`: redaction skips its searches only where they cannot match, and JSON lines keep their time."""

from __future__ import annotations

import io
import json
import logging
import re
from collections.abc import Iterator
from typing import Any

import pytest

from skillwire.ops import logs
from skillwire.ops.logs import REDACTED, JsonFormatter, redact


def searched_everywhere(text: str) -> str:
    """`redact` without its word gates (no secret registered): what every line got before they existed."""
    auth = re.compile(logs._AUTH_VALUE.pattern)
    field = re.compile(logs._SECRET_FIELD.pattern)
    text = auth.sub(lambda m: f"{m.group(1)} {REDACTED}", text)
    return field.sub(lambda m: m.group(1) + REDACTED, text)


@pytest.mark.parametrize(
    "text",
    [
        "skills/get ok in 1.2 ms",
        "Authorization: Bearer abc.DEF-123",
        "authorization: BEARER abc",
        "basic dXNlcjpwYXNz and more",
        "BASİC dXNlcjpwYXNz",  # dotted capital İ: IGNORECASE matches it to i
        "basıc dXNlcjpwYXNz",  # dotless ı: IGNORECASE matches it to i, casefold does not
        "ſession_token=s3cr3tvalue",  # long s: IGNORECASE matches it to s
        "secret_access_\u212aey: hunter22",  # Kelvin sign: IGNORECASE matches it to k
        '{"password": "hunter22", "token":"abcdef"}',
        "SecretAccessKey=AKIAxxxx then Token = zzz",
        "PaSsWoRd=x",
        "nothing here but keys and tokens",
    ],
)
def test_redact_says_what_the_unconditional_searches_say(text: str) -> None:
    assert redact(text) == searched_everywhere(text)


def test_a_gated_search_still_redacts() -> None:
    assert redact("bearer tok_123456") == f"bearer {REDACTED}"
    assert redact("basıc dXNlcjpwYXNz") == f"basıc {REDACTED}"
    assert redact("ſession_token=s3cr3t") == f"ſession_token={REDACTED}"


def test_json_lines_carry_each_records_own_second() -> None:
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(JsonFormatter(tracebacks=False))
    lines = []
    for created in (1_700_000_000.25, 1_700_000_000.75, 1_700_000_001.5, 1_699_999_999.0):
        record = logging.makeLogRecord({"msg": "x", "levelno": logging.INFO, "levelname": "INFO", "name": "t"})
        record.created, record.msecs = created, (created % 1) * 1000
        lines.append(json.loads(handler.format(record))["time"])
    assert lines == [
        "2023-11-14T22:13:20.250Z",
        "2023-11-14T22:13:20.750Z",
        "2023-11-14T22:13:21.500Z",
        "2023-11-14T22:13:19.000Z",
    ]


class KeptRecords(logging.Handler):
    def __init__(self) -> None:
        super().__init__()
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


def keep_records() -> list[logging.LogRecord]:
    """The records the root logger sees from now on, through a handler added beside configure_logging's."""
    handler = KeptRecords()
    logging.getLogger().addHandler(handler)
    return handler.records


def json_line(extra: dict[str, object], msg: str = "x") -> str:
    record = logging.makeLogRecord({"msg": msg, "levelno": logging.INFO, "levelname": "INFO", "name": "t", **extra})
    return JsonFormatter(tracebacks=False).format(record)


def test_a_json_line_is_compact_utf8_with_its_extra_keys_sorted() -> None:
    line = json_line({"skill": "déjà-vu", "index": 3, "duration_ms": 0.25, "code": None, "_private": 1})
    entry = json.loads(line)
    assert list(entry)[:5] == ["time", "level", "logger", "event", "message"]
    assert list(entry)[5:] == ["duration_ms", "index", "skill"]  # sorted; None and _private left out
    assert entry["skill"] == "déjà-vu"
    assert "déjà-vu" in line
    assert ", " not in line
    assert '": ' not in line


def test_a_line_pydantic_core_cannot_encode_is_still_one_json_line() -> None:
    # A lone surrogate (a file name that is not UTF-8, decoded with surrogateescape) is a value from outside:
    # it is written as a visible escape, which any JSON encoder takes.
    line = json_line({"path": "bad-\udcff-name"}, msg="skipped bad-\udcff-name")
    assert "\n" not in line
    assert json.loads(line)["path"] == "bad-\\udcff-name"
    assert json.loads(line)["message"] == "skipped bad-\\udcff-name"


def test_configured_logging_gathers_no_caller_thread_or_process(configured: io.StringIO) -> None:
    # What no line shows is not gathered: walking up the stack for the caller was a third of a request
    # line's cost. (The fixture puts the module's switches back after the test.)
    stream = configured
    logs.configure_logging("json", stream=stream)
    records = keep_records()
    logging.getLogger("skillwire.test").info("one line", extra={"event": "request"})
    assert records
    assert records[0].funcName == "(unknown function)"
    assert records[0].threadName is None
    assert records[0].processName is None
    assert records[0].process is None
    assert json.loads(stream.getvalue())["event"] == "request"


@pytest.fixture
def configured(monkeypatch: pytest.MonkeyPatch) -> Iterator[io.StringIO]:
    """`configure_logging`'s state for one test, put back after it."""
    for name in ("_srcfile", "logThreads", "logProcesses", "logMultiprocessing"):
        monkeypatch.setattr(logging, name, getattr(logging, name))
    root = logging.getLogger()
    monkeypatch.setattr(root, "handlers", list(root.handlers))
    monkeypatch.setattr(logs, "_direct", logs._direct)
    monkeypatch.setattr(logs, "_format", logs._format)
    for name in ("uvicorn", "uvicorn.error", "uvicorn.access"):
        logger = logging.getLogger(name)
        monkeypatch.setattr(logger, "handlers", list(logger.handlers))
        monkeypatch.setattr(logger, "propagate", logger.propagate)
    own, root_level = logging.getLogger("skillwire"), root.level
    own_level = own.level
    yield io.StringIO()
    own.setLevel(own_level)  # setLevel, not setattr: it clears the levels isEnabledFor cached
    root.setLevel(root_level)


def through_logging(fmt: str, level: int, code: str) -> str:
    """The request line as `logging` formats it (the path taken when a program added its own handler)."""
    formatter = JsonFormatter(tracebacks=False) if fmt == "json" else logs.HumanFormatter(tracebacks=False)
    shown = f"skills/get {'error ' + code if code else 'ok'} in 1.5 ms"
    extra = {"event": "request", "method": "skills/get", "outcome": "error" if code else "ok", "code": code or None}
    record = logging.makeLogRecord(
        {"msg": shown, "levelno": level, "levelname": logging.getLevelName(level), "name": "skillwire.requests"}
        | extra
        | {"duration_ms": 1.5}
    )
    return formatter.format(record)


@pytest.mark.parametrize("fmt", ["json", "human"])
@pytest.mark.parametrize("code", ["", "-32602"])
def test_a_request_line_written_directly_is_the_line_logging_writes(
    configured: io.StringIO, monkeypatch: pytest.MonkeyPatch, fmt: str, code: str
) -> None:
    logs.configure_logging(fmt, stream=configured)
    made: list[object] = []
    factory = logging.getLogRecordFactory()

    def counting(*args: Any, **kwargs: Any) -> logging.LogRecord:
        made.append(args)
        return factory(*args, **kwargs)

    monkeypatch.setattr(logging, "_logRecordFactory", counting)
    requests = logging.getLogger("skillwire.requests")
    logs.log_request(requests, logging.INFO, "skills/get", "error" if code else "ok", code, 0.0015)
    assert made == []  # no LogRecord: the line went straight to the one handler
    line = configured.getvalue()
    assert line.endswith("\n")
    assert line.count("\n") == 1
    expected = through_logging(fmt, logging.INFO, code)
    if fmt == "json":
        ours, theirs = json.loads(line), json.loads(expected)
        assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", ours.pop("time"))
        theirs.pop("time")
        assert ours == theirs
        assert list(ours) == list(theirs)  # the same key order too
    else:
        assert line.rstrip("\n") == expected


def test_a_request_line_goes_through_logging_when_a_program_added_a_handler(configured: io.StringIO) -> None:
    logs.configure_logging("json", stream=configured)
    seen = keep_records()
    logs.log_request(logging.getLogger("skillwire.requests"), logging.INFO, "skills/list", "ok", "", 0.002)
    assert len(seen) == 1
    assert seen[0].__dict__["method"] == "skills/list"
    assert seen[0].__dict__["event"] == "request"
    assert json.loads(configured.getvalue())["message"] == "skills/list ok in 2.0 ms"  # and still the same line
