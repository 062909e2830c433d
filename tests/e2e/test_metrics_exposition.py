"""What `/metrics` says after a known set of requests over real HTTP, with one worker and with two: every
skillwire family's name, type and help, every series' labels, the latency buckets' bounds, and exact totals.

The expected text is what prometheus_client's own Counter and Histogram objects wrote when the request
path called them (captured before the request series moved to plain counts read at scrape time, see
`ops.metrics.RequestCounts`): that change must not alter a name, a type, a help text, a label or a
bucket bound. With two workers each one writes its counts into its multi-process files at most
`FLUSH_SECONDS` late, so the two-worker scrape waits that long, then must be exact.
"""

from __future__ import annotations

import json
import re
import time
import urllib.error
import urllib.request
from typing import Any

from prometheus_client.parser import text_string_to_metric_families

from skillwire.ops.metrics import FLUSH_SECONDS
from support.servers import EXAMPLES, serve_http

PROTOCOL = "2026-07-28"
BOUNDS = ["0.0005", "0.001", "0.0025", "0.005", "0.01", "0.025", "0.05", "0.1", "0.25", "0.5"]
BOUNDS += ["1.0", "2.5", "5.0", "10.0", "+Inf"]
# In the order one worker writes them (a multi-process scrape reads its files in the directory's order).
HEADERS = [
    ("skillwire_requests_total", "counter", "MCP requests answered, by method and outcome"),
    ("skillwire_requests_created", "gauge", "MCP requests answered, by method and outcome"),
    ("skillwire_request_duration_seconds", "histogram", "Time to answer an MCP request, by method"),
    ("skillwire_request_duration_seconds_created", "gauge", "Time to answer an MCP request, by method"),
    ("skillwire_response_bytes_total", "counter", "Bytes of HTTP response bodies sent on /mcp"),
    ("skillwire_response_bytes_created", "gauge", "Bytes of HTTP response bodies sent on /mcp"),
    ("skillwire_catalog_skills", "gauge", "Skills in the snapshot served"),
    ("skillwire_catalog_files", "gauge", "Files in the snapshot served"),
    ("skillwire_catalog_skipped_skills", "gauge", "Skills found but not served (see the log)"),
    (
        "skillwire_index_loaded_timestamp_seconds",
        "gauge",
        "When the snapshot served was loaded (oldest worker)",
    ),
    (
        "skillwire_index_checked_timestamp_seconds",
        "gauge",
        "When the source of the snapshot (store pointer, git branch, folders) was last read successfully "
        "(oldest worker)",
    ),
    ("skillwire_reloads_total", "counter", "Catalog reloads, by outcome"),
    ("skillwire_reloads_created", "gauge", "Catalog reloads, by outcome"),
    ("skillwire_reload_duration_seconds", "histogram", "Time to rescan folders or look at the store"),
    ("skillwire_reload_duration_seconds_created", "gauge", "Time to rescan folders or look at the store"),
    (
        "skillwire_watch_events_total",
        "counter",
        "File-system events the catalog watcher was woken for, by backend (inotify | watchfiles)",
    ),
    ("skillwire_store_reads_total", "counter", "Skill files read from the object store, by outcome"),
    ("skillwire_poll_failures_total", "counter", "Looks at the store's pointer that failed"),
    ("skillwire_poll_failures_created", "gauge", "Looks at the store's pointer that failed"),
    ("skillwire_signature_skills", "gauge", "Skills served, by publisher signature status"),
    ("skillwire_bridge_upstream_up", "gauge", "1 while the bridge holds a working connection to the upstream"),
    (
        "skillwire_bridge_tool_calls_total",
        "counter",
        "Bridge tool calls: ok, error (a refusal or failure the model is told) or failed (an exception)",
    ),
    (
        "skillwire_bridge_approvals_total",
        "counter",
        "Bridge approval questions, by kind (skill load or cross-origin read) and outcome",
    ),
]
# Multi-process mode writes no `_created` series, and a family without a value in any file is absent.
MULTIPROCESS_HEADERS = {
    h
    for h in HEADERS
    if not h[0].endswith("_created")
    and h[0]
    not in (
        "skillwire_watch_events_total",  # nothing changed under the served folder
        "skillwire_store_reads_total",
        "skillwire_bridge_upstream_up",
        "skillwire_bridge_tool_calls_total",
        "skillwire_bridge_approvals_total",
    )
}
REQUESTS = {  # (method, outcome, code): how many the test sends
    ("skills/list", "ok", ""): 1,
    ("skills/get", "ok", ""): 3,
    ("skills/get", "error", "-32602"): 2,  # an unknown skill, and no uri at all
    ("other", "error", "-32601"): 1,  # a method no server has: its name never becomes a label
}
PER_METHOD = {"skills/list": 1, "skills/get": 5, "other": 1}


def post(url: str, method: str, params: dict[str, Any]) -> tuple[dict[str, Any], int]:
    """One 2026-07-28 request on its own connection (so two workers share them): the message and its bytes."""
    meta = {
        "io.modelcontextprotocol/protocolVersion": PROTOCOL,
        "io.modelcontextprotocol/clientInfo": {"name": "exposition", "version": "0"},
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": {**params, "_meta": meta}}).encode()
    headers = {
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": PROTOCOL,
        "Mcp-Method": method,
    }
    request = urllib.request.Request(url, body, headers, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            data = response.read()
    except urllib.error.HTTPError as exc:
        data = exc.read()
    message: dict[str, Any] = json.loads(data)
    return message, len(data)


def send_known_requests(url: str) -> int:
    """The requests of `REQUESTS`; the bytes of every response body received."""
    sent = 0
    listing, size = post(url, "skills/list", {})
    sent += size
    uri = listing["result"]["skills"][0]["uri"]
    for _ in range(3):
        answer, size = post(url, "skills/get", {"uri": uri})
        assert "result" in answer, answer
        sent += size
    for method, params, code in (
        ("skills/get", {"uri": uri + "-missing"}, -32602),
        ("skills/get", {}, -32602),
        ("no/such", {}, -32601),
    ):
        answer, size = post(url, method, params)
        assert answer["error"]["code"] == code, answer
        sent += size
    return sent


def scrape(url: str) -> str:
    with urllib.request.urlopen(url.removesuffix("/mcp") + "/metrics", timeout=10) as response:
        assert response.headers["Content-Type"].startswith("text/plain; version=0.0.4"), response.headers
        text: str = response.read().decode()
        return text


def headers(text: str) -> list[tuple[str, str, str]]:
    """(name, type, help) of every skillwire family, in the order of the text."""
    helps = {}
    out = []
    for line in text.splitlines():
        if line.startswith("# HELP skillwire_"):
            name, _, doc = line.removeprefix("# HELP ").partition(" ")
            helps[name] = doc
        elif line.startswith("# TYPE skillwire_"):
            name, _, kind = line.removeprefix("# TYPE ").partition(" ")
            out.append((name, kind, helps[name]))
    return out


def samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(text)
        if family.name.startswith("skillwire_")
        for s in family.samples
    }


def requests_counted(values: dict[tuple[str, tuple[tuple[str, str], ...]], float]) -> dict[tuple[str, str, str], float]:
    return {
        (labels["method"], labels["outcome"], labels["code"]): value
        for (name, key), value in values.items()
        if name == "skillwire_requests_total"
        for labels in [dict(key)]
    }


def check_request_series(values: dict[tuple[str, tuple[tuple[str, str], ...]], float], sent: int) -> None:
    assert requests_counted(values) == REQUESTS
    for method, count in PER_METHOD.items():
        bucket = "skillwire_request_duration_seconds_bucket"
        buckets = [values[(bucket, (("le", le), ("method", method)))] for le in BOUNDS]
        assert buckets == sorted(buckets), (method, buckets)
        assert buckets[-1] == count, (method, buckets)
        assert values[("skillwire_request_duration_seconds_count", (("method", method),))] == count
        assert values[("skillwire_request_duration_seconds_sum", (("method", method),))] > 0
    seconds = {dict(key)["method"] for name, key in values if name.startswith("skillwire_request_duration_seconds")}
    assert seconds == set(PER_METHOD)
    # The scrape's own body is counted once it is sent, so this scrape sees the /mcp answers and earlier scrapes.
    assert values[("skillwire_response_bytes_total", ())] >= sent


def test_one_worker_writes_the_request_series_as_prometheus_client_did() -> None:
    started = time.time()
    with serve_http(["--no-snapshot-cache", str(EXAMPLES)]) as server:
        sent = send_known_requests(server.url)
        text = scrape(server.url)
        assert headers(text) == HEADERS
        values = samples(text)
        check_request_series(values, sent)
        assert values[("skillwire_response_bytes_total", ())] == sent  # nothing but /mcp answered before it
        created = {
            (name, key): value
            for (name, key), value in values.items()
            if name in ("skillwire_requests_created", "skillwire_request_duration_seconds_created")
        }
        assert {(name, key) for name, key in created} == {
            *(
                ("skillwire_requests_created", (("code", code), ("method", method), ("outcome", outcome)))
                for method, outcome, code in REQUESTS
            ),
            *(("skillwire_request_duration_seconds_created", (("method", method),)) for method in PER_METHOD),
        }
        assert all(started <= value <= time.time() for value in created.values()), created
        # The series appear in the order they were first seen (prometheus_client's order of children).
        lines = [line for line in text.splitlines() if line.startswith("skillwire_requests_total{")]
        firsts = [match.group(1) for line in lines if (match := re.search(r'method="([^"]*)"', line))]
        assert firsts == ["skills/list", "skills/get", "skills/get", "other"]
        # A second scrape counts the first one's body and nothing else changes.
        again = samples(scrape(server.url))
        assert requests_counted(again) == REQUESTS
        assert again[("skillwire_response_bytes_total", ())] == sent + len(text.encode())


def test_two_workers_are_one_scrape_with_exact_totals() -> None:
    with serve_http(["--workers", "2", "--no-snapshot-cache", str(EXAMPLES)]) as server:
        sent = send_known_requests(server.url)
        # The scraped worker writes its own counts at the scrape; the other one's come from its flush thread
        # only, within FLUSH_SECONDS (three of them: a loaded machine delays a thread's wake-up).
        time.sleep(FLUSH_SECONDS * 3)
        text = scrape(server.url)
        assert set(headers(text)) == MULTIPROCESS_HEADERS
        check_request_series(samples(text), sent)
        time.sleep(FLUSH_SECONDS * 2)  # nothing is counted twice by later flushes
        assert requests_counted(samples(scrape(server.url))) == REQUESTS
