"""`core.logs`: redaction skips its searches only where they cannot match, and JSON lines keep their time."""

from __future__ import annotations

import io
import json
import logging
import re

import pytest

from skillwire.core import logs
from skillwire.core.logs import REDACTED, JsonFormatter, redact


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
