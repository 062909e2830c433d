"""One log format for the whole program, and the rule that no secret reaches a log line.

`configure_logging` installs one handler on stderr for every logger (skillwire's, the `mcp` SDK's,
uvicorn's): human lines by default (`skillwire: message`, `skillwire: warning: message`), or JSON lines
with `--log-format json` or `SKILLWIRE_LOG_FORMAT=json`, one object a line:

    {"time": "2026-12-01T22:10:03.120Z", "level": "info", "logger": "skillwire.published",
     "event": "swap", "message": "now serving index 3f2a... from s3://skills/prod", "index": "3f2a..."}

A line's `event` comes from the call's `extra={"event": ...}` (`log`, in this module's terms), and the
other `extra` fields (the skill or index involved; for requests method, outcome and duration_ms) are
keys of the object. A line without one is `"event": "log"`.

Values from outside (a folder name, a URI, a client's `Host` header in the SDK's own warning) are escaped
in every format by the formatters here, the one place, whoever logged them (`core.display.escape`: every
character that could end a line, move the cursor or hide text becomes a visible escape), so no value can
write a line of its own such as a fake `skillwire: warning:` or send a terminal escape to the operator's
terminal. A message's template is the program's own and keeps its line breaks; its arguments are values;
a message logged without arguments (a string built before the call, as the SDK's and uvicorn's f-strings
are) is a value as a whole. A traceback (`--debug`) is indented under its line, each line escaped.

Secrets: every formatted line, human or JSON, passes `redact`, which replaces each value registered
with `register_secret` (bearer tokens in a `--tokens` file, AWS secret keys and session tokens from the
environment or a `credential_process`) and anything shaped like an `Authorization` header value with
`[redacted]`. Registering is how a secret is known to be one; the patterns catch what was never
registered (a token a client sent).
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import re
import sys
import threading
import time
from typing import Any, Literal, TextIO

import pydantic_core

from skillwire.core.display import escape

__all__: list[str] = []  # internal (see the module docstring)

LOG_FORMAT_ENV = "SKILLWIRE_LOG_FORMAT"
LogFormat = Literal["human", "json"]
REDACTED = "[redacted]"
_MIN_SECRET = 6  # shorter values would redact ordinary words; no real secret is that short
_SECRET_ENV = ("AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "SKILLWIRE_CURSOR_SECRET", "SKILLWIRE_LIST_SKILLS_SECRET")
_AUTH_VALUE = re.compile(r"(?i)\b(bearer|basic)\s+[A-Za-z0-9._~+/=-]+")
_SECRET_FIELD = re.compile(r"(?i)(\"?(?:secret_?access_?key|session_?token|token|password)\"?\s*[:=]\s*\"?)[^\s\",}]+")

_secrets: set[str] = set()
_secrets_lock = threading.Lock()
_pattern: re.Pattern[str] | None = None
_format: LogFormat = "human"

# A line's values as JSON has them; anything else as text (a tuple, not `str | int | ...`: a union object
# made per field). Lines are encoded by pydantic-core (a dependency of the SDK already; `json` rebuilds its
# encoder on every call, docs/measurements.md); json's, the same options, takes what pydantic-core refuses
# (a lone surrogate, from a file name that is not UTF-8).
_PLAIN = (str, int, float, bool)
_FALLBACK_ENCODER = json.JSONEncoder(ensure_ascii=False, default=str, separators=(",", ":"))
# What `LogRecord` itself carries; everything else on a record came from `extra=`.
_RECORD_FIELDS = frozenset(vars(logging.makeLogRecord({}))) | {"message", "asctime", "event"}


def register_secret(value: str | bytes | None) -> None:
    """Never log `value`: each occurrence in a log line becomes `[redacted]`."""
    global _pattern
    if value is None:
        return
    text = value.decode(errors="replace") if isinstance(value, bytes) else value
    if len(text) < _MIN_SECRET:
        return
    with _secrets_lock:
        if text in _secrets:
            return
        _secrets.add(text)
        # Longest first, so a secret containing another is replaced whole.
        _pattern = re.compile("|".join(re.escape(s) for s in sorted(_secrets, key=len, reverse=True)))


def redact(text: str) -> str:
    pattern = _pattern
    if pattern is not None:
        text = pattern.sub(REDACTED, text)
    # Each pattern below is searched only where its words occur: the case-insensitive searches scan every
    # position and were a fifth of a JSON request line's cost, while most lines hold none of these words.
    # `casefold` covers every letter `re.IGNORECASE` equates with theirs (`ſ` for s, `K` for k) except the
    # dotless `ı`, which it matches to i: hence "bas", not "basic" (tests/ops/test_logs.py checks this).
    folded = text.casefold()
    if "bearer" in folded or "bas" in folded:
        text = _AUTH_VALUE.sub(lambda m: f"{m.group(1)} {REDACTED}", text)
    if "token" in folded or "password" in folded or "key" in folded:
        text = _SECRET_FIELD.sub(lambda m: m.group(1) + REDACTED, text)
    return text


def log_format(explicit: str | None = None) -> LogFormat:
    """The format asked for: the flag, else `SKILLWIRE_LOG_FORMAT`, else human."""
    chosen = (explicit or os.environ.get(LOG_FORMAT_ENV) or "human").strip().lower()
    return "json" if chosen == "json" else "human"


def current_format() -> LogFormat:
    return _format


def _human_line(level: int, logger_name: str, message: str) -> str:
    """A human line before redaction: `skillwire: message`, warnings and errors saying so."""
    if level >= logging.ERROR:
        return f"skillwire: error: {message}"
    if level >= logging.WARNING:
        return f"skillwire: warning: {message}"
    if level <= logging.DEBUG:
        return f"skillwire: debug: {logger_name}: {message}"
    return f"skillwire: {message}"


class _Value:
    """One argument of a log call, shown escaped whichever way the template converts it (`%s`, `%r`)."""

    __slots__ = ("value",)

    def __init__(self, value: object) -> None:
        self.value = value

    def __str__(self) -> str:
        return escape(str(self.value), None)

    def __repr__(self) -> str:
        return escape(repr(self.value), None)


def _shown(value: object) -> object:
    # Numbers stay numbers (`%d`, `%.1f` need them) and cannot break a line; everything else is a value.
    return value if isinstance(value, int | float) else _Value(value)


def message_of(record: logging.LogRecord) -> str:
    """A record's message with every value from outside escaped: the template's arguments, or the whole
    message when there are none (a string built before the call)."""
    args = record.args
    if not args:
        return escape(str(record.msg), None)
    try:
        if isinstance(args, dict):
            return str(record.msg) % {key: _shown(value) for key, value in args.items()}
        return str(record.msg) % tuple(map(_shown, args))
    except (TypeError, ValueError, KeyError):  # a template that does not fit its arguments: all a value
        return escape(record.getMessage(), None)


def _error_of(error: BaseException) -> str:
    """`Type: message` on one line, escaped (an exception's text often quotes what it was given)."""
    return f"{type(error).__name__}: {escape(str(error).strip())}"


def _indented_traceback(text: str) -> str:
    """A traceback under its log line: each line indented and escaped, so none reads as a line of its own
    (an exception's message can hold a line break and a fake `skillwire: warning:` after it)."""
    return "\n".join("    " + escape(line, None) for line in text.splitlines())


class HumanFormatter(logging.Formatter):
    """`skillwire: message`; warnings and errors say so; the traceback only with --debug."""

    def __init__(self, *, tracebacks: bool) -> None:
        super().__init__()
        self.tracebacks = tracebacks

    def format(self, record: logging.LogRecord) -> str:
        line = _human_line(record.levelno, record.name, message_of(record))
        if record.exc_info and record.exc_info[1] is not None:
            if self.tracebacks:
                line += "\n" + _indented_traceback(self.formatException(record.exc_info))
            else:
                line += f" ({_error_of(record.exc_info[1])})"
        return redact(line)


class JsonFormatter(logging.Formatter):
    """One JSON object a line (see the module docstring)."""

    def __init__(self, *, tracebacks: bool) -> None:
        super().__init__()
        self.tracebacks = tracebacks

    def format(self, record: logging.LogRecord) -> str:
        fields = vars(record)
        entry = _json_entry(
            record.created,
            record.msecs,
            record.levelname,
            record.name,
            getattr(record, "event", None) or "log",
            message_of(record),
            # The `extra` keys, by one set difference in C (a loop over every attribute of the record,
            # testing each, was a third of a request line's cost).
            {key: fields[key] for key in fields.keys() - _RECORD_FIELDS if not key.startswith("_")},
        )
        if record.exc_info and record.exc_info[1] is not None:
            error = record.exc_info[1]
            entry["error"] = f"{type(error).__name__}: {escape(str(error), None)}"
            if self.tracebacks:
                entry["traceback"] = _indented_traceback(self.formatException(record.exc_info))
        return redact(_json_text(entry))


def _json_entry(
    created: float, msecs: float, level_name: str, logger_name: str, event: str, message: str, extras: dict[str, Any]
) -> dict[str, Any]:
    """A JSON line's object: its five fixed keys, then `extras` sorted (a line's keys come in one order),
    without the None ones, each as JSON has it or else as text."""
    entry: dict[str, Any] = {
        "time": _json_time(created, msecs),
        "level": level_name.lower(),
        "logger": logger_name,
        "event": event,
        "message": message,
    }
    for key in sorted(extras):
        value = extras[key]
        if value is not None:
            # JSON escapes C0 controls, quotes and backslashes; `escape` also the C1 controls, bidi and line
            # separators it leaves raw, which a terminal showing the line would act on.
            if type(value) is str:
                entry[key] = escape(value, None)
            else:
                entry[key] = value if isinstance(value, _PLAIN) else escape(str(value), None)
    return entry


def _json_text(entry: dict[str, Any]) -> str:
    try:
        return pydantic_core.to_json(entry).decode()
    except pydantic_core.PydanticSerializationError:
        return _FALLBACK_ENCODER.encode(entry)


_stamp: tuple[int, str] = (-1, "")  # (a second, its date): one tuple, replaced whole


def _json_time(created: float, msecs: float) -> str:
    """A JSON line's `time`: UTC to the millisecond. A busy server logs many lines a second, so each
    second's date is formatted once."""
    global _stamp
    second, stamp = _stamp
    if int(created) != second:
        second = int(created)
        stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(second))
        _stamp = (second, stamp)
    return f"{stamp}.{int(msecs):03d}Z"


# The handler `configure_logging` installed, while it is the only one (see `log_request`).
_direct: logging.StreamHandler[TextIO] | None = None


def log_request(logger: logging.Logger, level: int, method: str, outcome: str, code: str, seconds: float) -> None:
    """One request's line (`--log-requests`): `method outcome [code] in N ms`, with those as JSON fields.

    A server logs one of these per request, so when the program's own handler is the only one there is (the
    CLI's configuration: nobody added a handler or filter), the line is written straight to it, as its
    formatter would write it, without a `LogRecord`: through `logging` the line cost about 98,000
    instructions, 9% of a `skills/get`'s server time, and most of it was building and dispatching a
    record no line needs. The values are the observer's own (a known method name, ok/error, a JSON-RPC
    code, a duration), never a client's text, so there is nothing to redact. Otherwise (a program that
    configured logging itself) it is an ordinary `logger.log` call, formatted by whatever it installed.
    """
    ms = seconds * 1000
    shown = f"{method} {outcome}{' ' + code if code else ''} in {ms:.1f} ms"
    handler = _direct
    root = logging.root
    if (
        handler is None
        or len(root.handlers) != 1
        or root.handlers[0] is not handler
        or logger.handlers
        or logger.filters
        or not logger.propagate
    ):
        extra = {"event": "request", "method": method, "outcome": outcome, "code": code or None}
        logger.log(level, "%s", shown, extra=extra | {"duration_ms": round(ms, 3)})
        return
    if _format == "json":
        now = time.time()
        # The entry _json_entry would build, written out: its keys are known and already in sorted order,
        # and the generic sort-and-check loop was a fifth of this line's cost (41,600 instructions against
        # 34,300). tests/ops/test_logs.py checks the two lines are equal.
        entry: dict[str, Any] = {
            "time": _json_time(now, (now % 1) * 1000),
            "level": logging.getLevelName(level).lower(),
            "logger": logger.name,
            "event": "request",
            "message": shown,
        }
        if code:
            entry["code"] = code
        entry["duration_ms"] = round(ms, 3)
        entry["method"] = method
        entry["outcome"] = outcome
        line = _json_text(entry)
    else:
        line = _human_line(level, logger.name, shown)
    with handler.lock or contextlib.nullcontext():
        handler.stream.write(line + "\n")
        handler.stream.flush()


def configure_logging(
    fmt: str | None = None,
    *,
    debug: bool = False,
    quiet: bool = False,
    requests: bool = False,
    stream: TextIO | None = None,
) -> LogFormat:
    """One stderr handler for every logger, in the format asked for; returns it.

    skillwire's own loggers say what happens (INFO: a reload, a swap, a skip), `--quiet` keeps only
    warnings and errors, `--debug` shows everything with tracebacks. Other libraries' loggers (the SDK,
    uvicorn) show warnings and errors. The secrets in `SKILLWIRE_CURSOR_SECRET` and the AWS variables
    are registered here, so no line can carry them.
    """
    global _format, _direct
    _format = log_format(fmt)
    # What a record would gather and no line shows: the caller's frame (a walk up the stack, a third of a
    # request line's cost), the thread, the process and the multiprocessing name (the logging HOWTO's
    # "Optimization" switches). The program's own configuration, so it may set these process-wide.
    logging._srcfile = None
    logging.logThreads = logging.logProcesses = logging.logMultiprocessing = False
    for name in _SECRET_ENV:
        register_secret(os.environ.get(name))
    handler = logging.StreamHandler(stream if stream is not None else sys.stderr)
    formatter: logging.Formatter = (
        JsonFormatter(tracebacks=debug) if _format == "json" else HumanFormatter(tracebacks=debug)
    )
    handler.setFormatter(formatter)
    _direct = handler
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(logging.DEBUG if debug else logging.WARNING)
    own = logging.getLogger("skillwire")
    own.setLevel(logging.DEBUG if debug else logging.WARNING if quiet else logging.INFO)
    # `requests` (--log-requests): the request lines were asked for by name, so `quiet` does not silence
    # them (a `--workers N` server makes every worker but the first quiet, and those answer requests too).
    logging.getLogger("skillwire.requests").setLevel(logging.INFO if requests and not debug else logging.NOTSET)
    # uvicorn's loggers have handlers of their own (its default config); its lines come here instead.
    for name in ("uvicorn", "uvicorn.error", "uvicorn.access"):
        logger = logging.getLogger(name)
        logger.handlers.clear()
        logger.propagate = True
    return _format
