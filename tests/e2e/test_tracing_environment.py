"""Traces from the command line (issue 37): the standard `OTEL_*` environment configures OpenTelemetry's SDK
for any `skillwire` command. Real processes; the console exporter writes spans to stderr (stdout is the
protocol under `serve --stdio`), and nothing is sent over the network."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from support.servers import EXAMPLES

SKILLWIRE = [sys.executable, "-m", "skillwire.cli.main"]


def run(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    return subprocess.run(
        [*SKILLWIRE, *args], env=clean | env, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=120
    )


def spans_in(text: str) -> list[dict[str, object]]:
    """The JSON objects the console exporter wrote, one per span, among the other stderr lines."""
    decoder = json.JSONDecoder()
    spans, at = [], 0
    while (start := text.find("{\n", at)) != -1:
        value, at = decoder.raw_decode(text, start)
        spans.append(value)
    return spans


def test_otel_traces_exporter_console_writes_the_scan_span_to_stderr() -> None:
    done = run(
        {"OTEL_TRACES_EXPORTER": "console", "OTEL_SERVICE_NAME": "skills-test"},
        "serve",
        str(EXAMPLES),
        "--stdio",
        "--no-digest-cache",
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == ""  # the protocol's stream carries no span
    scans = [span for span in spans_in(done.stderr) if span["name"] == "skillwire.scan"]
    assert len(scans) == 1, done.stderr
    attributes = scans[0]["attributes"]
    assert isinstance(attributes, dict)
    assert attributes["skillwire.skills"] == 5
    resource = scans[0]["resource"]
    assert isinstance(resource, dict)
    assert resource["attributes"]["service.name"] == "skills-test"


def test_without_the_variables_nothing_is_traced_or_said() -> None:
    done = run({}, "serve", str(EXAMPLES), "--stdio", "--no-digest-cache")
    assert done.returncode == 0, done.stderr
    assert "skillwire.scan" not in done.stderr
    assert "warning" not in done.stderr


def test_an_otlp_endpoint_without_its_exporter_package_is_one_warning_line() -> None:
    done = run({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:9"}, "lint", str(EXAMPLES))
    assert done.returncode == 0, done.stderr
    lines = [line for line in done.stderr.splitlines() if "warning" in line]
    assert lines == [
        "skillwire: warning: OTEL_TRACES_EXPORTER=otlp needs opentelemetry-exporter-otlp-proto-http "
        "(pip install opentelemetry-exporter-otlp-proto-http); no traces are exported"
    ]
