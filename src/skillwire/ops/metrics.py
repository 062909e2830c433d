"""Every Prometheus metric skillwire exports, defined once, and the scrape that writes them.

`metrics()` builds the metric objects on first use, never at import: `prometheus_client` decides at
its own import whether values live in this process's memory or in the files of
`PROMETHEUS_MULTIPROC_DIR` (its multi-process mode), and `skillwire serve --workers N` sets that
directory before the first worker forks, so N workers add up in one scrape (`exposition`).

No label carries a token, a skill body, a URI or anything else a client chooses: this module is the one
owner of every label's set of values (`LABEL_VALUES`, by metric and label), and every value passes through
`bounded` (or `method_label`, `code_label`) on its way to a label, so anything outside its set counts as
"other": `method` is one of `KNOWN_METHODS`, `code` one of `ERROR_CODES` (the JSON-RPC and MCP codes; a
client answering the bridge's approval question with an error picks its own code, which must not mint a
series), `outcome`, `status`, `kind`, `backend` and `tool` are fixed words, and `upstream` is one of the
labels the operator configured for the bridge (a bounded set, fixed at start). What the catalog holds is
counted, never named.

Gauges in multi-process mode say how they combine: sizes take the largest live worker's value,
timestamps the oldest live worker's (so a stale-index alert fires when any worker is stale). The
index id, a label that changes at every publish, is not a multi-process series (its files would keep
every id ever served): it is read from the scraped worker at scrape time (`skillwire_index_info`).

The per-request series (requests, request latency, response bytes) are `RequestCounts`: plain Python
numbers on the request path, handed to prometheus_client when it reads them (its Counter and Histogram
calls cost some 30 Python calls and two locks per request, about 2.7% of a `skills/get`'s instructions).
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from skillwire.core.protocol import (
    METHOD_GET,
    METHOD_LIST,
    METHOD_READ_DIRECTORY,
    METHOD_RESOURCES_LIST,
    METHOD_RESOURCES_READ,
)

if TYPE_CHECKING:
    from prometheus_client import Counter, Gauge, Histogram
    from prometheus_client.metrics_core import Metric
    from prometheus_client.registry import CollectorRegistry

__all__: list[str] = []  # internal: the metric names are the interface (README, "Deployment")

MULTIPROC_ENV = "PROMETHEUS_MULTIPROC_DIR"  # prometheus_client's own variable
KNOWN_METHODS = frozenset(
    {
        "initialize",
        "server/discover",  # 2026-07-28's first request (and the bridge's liveness probe)
        "ping",
        METHOD_LIST,
        METHOD_GET,
        METHOD_RESOURCES_READ,
        METHOD_RESOURCES_LIST,
        "resources/templates/list",
        METHOD_READ_DIRECTORY,
        "subscriptions/listen",
        "tools/list",
        "tools/call",
        "prompts/list",
        "notifications/initialized",
    }
)
# From 0.5 ms (a cached skills/get on loopback) to 10 s (a cold listing of a big catalog over a slow store).
LATENCY_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
# How late a worker's request counts may reach its multi-process files (`RequestCounts`).
FLUSH_SECONDS = 1.0
RELOAD_BUCKETS = (0.01, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)


OTHER = "other"  # the value of every label whose value is outside its set


def bounded(value: str, values: frozenset[str]) -> str:
    """`value` if it is one of `values`, else "other": the one way a value reaches a label."""
    return value if value in values else OTHER


def method_label(method: str) -> str:
    """The `method` label: a method of the protocol, or "other" (a client may send any string)."""
    return bounded(method, KNOWN_METHODS)


# The JSON-RPC error codes a `code` label may name: JSON-RPC's own, and MCP's (the SDK's mcp_types names
# them; written here as numbers because `ops/` imports no SDK). Any other code is "other".
ERROR_CODES = frozenset(
    str(code)
    for code in (
        -32700,  # parse error
        -32600,  # invalid request
        -32601,  # method not found
        -32602,  # invalid params
        -32603,  # internal error
        -32000,  # connection closed
        -32001,  # request timeout
        -32002,  # resource not found
        -32020,  # header mismatch
        -32021,  # missing required client capability
        -32022,  # unsupported protocol version
        -32042,  # URL elicitation required
    )
)


def code_label(code: int) -> str:
    """The `code` label of a failed request: a JSON-RPC or MCP error code, or "other" (a client's own)."""
    return bounded(str(code), ERROR_CODES)


def multiprocess_dir() -> str | None:
    return os.environ.get(MULTIPROC_ENV) or None


REQUESTS = ("skillwire_requests", "MCP requests answered, by method and outcome", ("method", "outcome", "code"))
REQUEST_SECONDS = ("skillwire_request_duration_seconds", "Time to answer an MCP request, by method", ("method",))
RESPONSE_BYTES = ("skillwire_response_bytes", "Bytes of HTTP response bodies sent on /mcp", ())


class RequestCounts:
    """`skillwire_requests_total{method,outcome,code}`, `skillwire_request_duration_seconds{method}` and
    `skillwire_response_bytes_total`, counted in plain Python and written by prometheus_client when read.

    The request path (`server.observe`) adds to `series_of(method, code)`, a list of one count per latency
    bucket (the last one +Inf) and then the sum of seconds, and to `response_bytes`: no call into
    prometheus_client, no lock. A request is counted by the thread of the event loop that answers it, as
    every skillwire server runs one loop per process. What is exposed is what prometheus_client's Counter
    and Histogram wrote when the request path called them (tests/e2e/test_metrics_exposition.py):
    - one process: `collect()` builds the three families at scrape time, on the loop's thread (so a scrape
      sees every request answered before it), with the series in the order they were first seen and
      their `_created` times;
    - multi-process mode (`serve --workers N`): a scrape is one worker reading every worker's files, so
      each worker writes its own counts into its own files (`flush`): the scraped worker at the scrape,
      every worker each `FLUSH_SECONDS` from a thread, and at exit (`server.workers`). Another worker's
      counts are at most FLUSH_SECONDS (plus the time its thread waits for the interpreter) behind; a
      worker killed with SIGKILL loses at most that last second.
    """

    def __init__(self, multiprocess: bool) -> None:
        self.response_bytes = 0
        self.series: dict[tuple[str, str], list[float]] = {}
        self._created: dict[tuple[str, str], float] = {}
        self._method_created: dict[str, float] = {}
        self._bytes_created = time.time()
        self._flushed: _Flushed | None = _Flushed() if multiprocess else None

    def series_of(self, method: str, code: str) -> list[float]:
        """The counts of (`method`, `code`), made at their first request (the bounded set of `method_label`
        and the server's own error codes: see the module docstring)."""
        key = (method, code)
        series = self.series.get(key)
        if series is None:
            now = time.time()
            self._method_created.setdefault(method, now)
            self._created[key] = now
            series = self.series[key] = [0] * (len(LATENCY_BUCKETS) + 1) + [0.0]
            if self._flushed is not None:
                self._flushed.start(self)
        return series

    def totals(self) -> tuple[list[tuple[tuple[str, str], list[float]]], dict[str, list[float]]]:
        """A copy of every series (in the order first seen), and their sums by method (the histogram's
        label): what a scrape or a flush writes."""
        series = [(key, list(counts)) for key, counts in list(self.series.items())]
        by_method: dict[str, list[float]] = {}
        for (method, _), counts in series:
            total = by_method.setdefault(method, [0.0] * len(counts))
            for index, count in enumerate(counts):
                total[index] += count
        return series, by_method

    def describe(self) -> list[Metric]:
        return list(self._families(with_samples=False))

    def collect(self) -> list[Metric]:
        return list(self._families(with_samples=True))

    def _families(self, *, with_samples: bool) -> Iterator[Metric]:
        from prometheus_client.core import CounterMetricFamily, HistogramMetricFamily
        from prometheus_client.samples import Sample

        created = _created_series()
        requests = CounterMetricFamily(REQUESTS[0], REQUESTS[1], labels=REQUESTS[2])
        seconds = HistogramMetricFamily(REQUEST_SECONDS[0], REQUEST_SECONDS[1], labels=REQUEST_SECONDS[2])
        if with_samples:
            bounds = _latency_bucket_labels()
            series, by_method = self.totals()
            for (method, code), counts in series:
                requests.add_metric(
                    [method, "error" if code else "ok", code],
                    float(sum(counts[:-1])),
                    created=self._created[(method, code)] if created else None,
                )
            for method, total in by_method.items():
                cumulative, running = [], 0.0
                for bound, count in zip(bounds, total[:-1], strict=True):
                    running += count
                    cumulative.append((bound, running))
                seconds.add_metric([method], cumulative, total[-1])
                if created:  # HistogramMetricFamily takes no created time; the Histogram's sample, as it wrote it
                    when = self._method_created[method]
                    seconds.samples.append(Sample(REQUEST_SECONDS[0] + "_created", {"method": method}, when))
        yield requests
        yield seconds
        if with_samples:
            yield CounterMetricFamily(
                RESPONSE_BYTES[0],
                RESPONSE_BYTES[1],
                value=float(self.response_bytes),
                created=self._bytes_created if created else None,
            )
        else:
            yield CounterMetricFamily(RESPONSE_BYTES[0], RESPONSE_BYTES[1])

    def flush(self) -> None:
        """Multi-process mode: this process's counts into its own files now (nothing otherwise)."""
        if self._flushed is not None:
            self._flushed.write(self)


def _latency_bucket_labels() -> list[str]:
    """The `le` label of each latency bucket, +Inf last, as prometheus_client's Histogram writes them (the
    scrape's families and the multi-process files name the same buckets)."""
    from prometheus_client.utils import floatToGoString

    return [*map(floatToGoString, LATENCY_BUCKETS), "+Inf"]


def _created_series() -> bool:
    """Whether prometheus_client writes `_created` series (PROMETHEUS_DISABLE_CREATED_SERIES, or its
    `disable_created_metrics()`): its own flag, read so the series written here follow it."""
    from prometheus_client import metrics as client_metrics

    return bool(getattr(client_metrics, "_use_created", True))


class _Flushed:
    """A process's request counts as prometheus_client's multi-process values (its files in
    PROMETHEUS_MULTIPROC_DIR), made in the order its Counter and Histogram made them and set to the
    running totals: a flush that runs twice writes the same numbers."""

    def __init__(self) -> None:
        from prometheus_client import values

        self._value = values.ValueClass
        self._lock = threading.Lock()
        self._pid = os.getpid()
        self._thread: threading.Thread | None = None
        self._requests: dict[tuple[str, str], Any] = {}
        self._seconds: dict[str, tuple[Any, list[Any]]] = {}
        self._written: dict[object, float] = {}
        # The unlabelled counter has its value from the start, as the Counter made it at `metrics()`.
        self._bytes = self._value("counter", RESPONSE_BYTES[0], RESPONSE_BYTES[0] + "_total", (), (), RESPONSE_BYTES[1])

    def start(self, counts: RequestCounts) -> None:
        """The thread that flushes each FLUSH_SECONDS, started in the process that counts (a fork keeps no
        thread: `serve --workers N` forks before anything counts)."""
        with self._lock:
            if self._thread is not None and self._pid == os.getpid():
                return
            self._pid = os.getpid()
            self._thread = threading.Thread(
                target=self._run, args=(counts,), name="skillwire-metrics-flush", daemon=True
            )
            self._thread.start()

    def _run(self, counts: RequestCounts) -> None:
        while True:
            time.sleep(FLUSH_SECONDS)
            self.write(counts)

    def write(self, counts: RequestCounts) -> None:
        with self._lock:
            self._set(self._bytes, counts.response_bytes)
            series, by_method = counts.totals()
            for (method, code), snapshot in series:
                value = self._requests.get((method, code))
                if value is None:
                    name, doc, names = REQUESTS
                    outcome = "error" if code else "ok"
                    value = self._value("counter", name, name + "_total", names, (method, outcome, code), doc)
                    self._requests[(method, code)] = value
                self._set(value, sum(snapshot[:-1]))
                if method not in self._seconds:
                    name, doc, labels = REQUEST_SECONDS
                    total_sum = self._value("histogram", name, name + "_sum", labels, (method,), doc)
                    buckets = [
                        self._value("histogram", name, name + "_bucket", (*labels, "le"), (method, le), doc)
                        for le in _latency_bucket_labels()
                    ]
                    self._seconds[method] = (total_sum, buckets)
            for method, total in by_method.items():
                total_sum, buckets = self._seconds[method]
                for value, count in zip(buckets, total[:-1], strict=True):  # per bucket, as Histogram keeps them
                    self._set(value, count)
                self._set(total_sum, total[-1])

    def _set(self, value: Any, number: float) -> None:
        if self._written.get(value) != number:  # an unchanged series is not written again
            value.set(float(number))
            self._written[value] = number


@dataclass(frozen=True)
class Metrics:
    requests: RequestCounts  # requests, their latency and the bytes answered (counted per request)
    catalog_skills: Gauge
    catalog_files: Gauge
    skipped_skills: Gauge
    index_loaded: Gauge  # unix time the served snapshot was swapped in
    index_checked: Gauge  # unix time the source (store pointer, git branch, folders) was last read successfully
    reloads: Counter  # outcome: swapped | unchanged | failed
    reload_seconds: Histogram
    watch_events: Counter  # backend: inotify | watchfiles
    store_reads: Counter  # outcome: hit | miss | error
    poll_failures: Counter
    signatures: Gauge  # status: signed | unsigned | stale
    bridge_upstream_up: Gauge  # upstream (a label the operator configured)
    bridge_tool_calls: Counter  # tool (one of the bridge's three), outcome: ok | error | failed
    bridge_approvals: Counter  # kind: skill | read; outcome: one of APPROVAL_OUTCOMES


_lock = threading.Lock()
_metrics: Metrics | None = None
# What the scraped process says about itself at scrape time (see the module docstring).
_info_sources: list[Callable[[], dict[str, str] | None]] = []


def metrics() -> Metrics:
    global _metrics
    if _metrics is not None:
        return _metrics
    with _lock:
        if _metrics is None:
            _metrics = _build()
    return _metrics


def _request_counts() -> RequestCounts:
    from prometheus_client import REGISTRY

    directory = multiprocess_dir()
    counts = RequestCounts(multiprocess=directory is not None)
    if directory is None:
        REGISTRY.register(counts)
    return counts


def flush() -> None:
    """Multi-process mode: this process's request counts into its files (a worker about to exit)."""
    if _metrics is not None:
        _metrics.requests.flush()


def _build() -> Metrics:
    from prometheus_client import Counter, Gauge, Histogram

    def gauge(name: str, doc: str, labels: tuple[str, ...] = (), mode: str = "livemax") -> Gauge:
        return Gauge(name, doc, labels, multiprocess_mode=mode)  # type: ignore[arg-type]

    return Metrics(
        # Made first, as its three families were: the scrape's order of families does not change.
        requests=_request_counts(),
        catalog_skills=gauge("skillwire_catalog_skills", "Skills in the snapshot served"),
        catalog_files=gauge("skillwire_catalog_files", "Files in the snapshot served"),
        skipped_skills=gauge("skillwire_catalog_skipped_skills", "Skills found but not served (see the log)"),
        index_loaded=gauge(
            "skillwire_index_loaded_timestamp_seconds",
            "When the snapshot served was loaded (oldest worker)",
            (),
            "livemin",
        ),
        index_checked=gauge(
            "skillwire_index_checked_timestamp_seconds",
            "When the source of the snapshot (store pointer, git branch, folders) was last read successfully "
            "(oldest worker)",
            (),
            "livemin",
        ),
        reloads=Counter("skillwire_reloads", "Catalog reloads, by outcome", ("outcome",)),
        reload_seconds=Histogram(
            "skillwire_reload_duration_seconds", "Time to rescan folders or look at the store", buckets=RELOAD_BUCKETS
        ),
        watch_events=Counter(
            "skillwire_watch_events",
            "File-system events the catalog watcher was woken for, by backend (inotify | watchfiles)",
            ("backend",),
        ),
        store_reads=Counter(
            "skillwire_store_reads", "Skill files read from the object store, by outcome", ("outcome",)
        ),
        poll_failures=Counter("skillwire_poll_failures", "Looks at the store's pointer that failed"),
        signatures=gauge("skillwire_signature_skills", "Skills served, by publisher signature status", ("status",)),
        bridge_upstream_up=gauge(
            "skillwire_bridge_upstream_up",
            "1 while the bridge holds a working connection to the upstream",
            ("upstream",),
        ),
        bridge_tool_calls=Counter(
            "skillwire_bridge_tool_calls",
            "Bridge tool calls: ok, error (a refusal or failure the model is told) or failed (an exception)",
            ("tool", "outcome"),
        ),
        bridge_approvals=Counter(
            "skillwire_bridge_approvals",
            "Bridge approval questions, by kind (skill load or cross-origin read) and outcome",
            ("kind", "outcome"),
        ),
    )


# What became of an approval question. `asked` counts every question whose answer reached the bridge (so
# asked = granted + refused + dismissed); `unasked` is a question the client could not show (no elicitation).
APPROVAL_OUTCOMES = frozenset({"asked", "granted", "refused", "dismissed", "unasked"})
APPROVAL_KINDS = frozenset({"skill", "read"})
TOOL_OUTCOMES = frozenset({"ok", "error", "failed"})
# The bridge's three tools (host/tool_schemas.py's TOOL_NAMES, which `ops/` cannot import: a test holds the two
# equal).
BRIDGE_TOOLS = frozenset({"list_skills", "read_skill", "read_resource"})
RELOAD_OUTCOMES = frozenset({"swapped", "unchanged", "failed"})
WATCH_BACKENDS = frozenset({"inotify", "watchfiles"})
STORE_READ_OUTCOMES = frozenset({"hit", "miss", "error"})
SIGNATURE_STATUSES = frozenset({"signed", "unsigned", "stale"})
# Every labelled metric, each label and its values; None: the upstream labels the operator configured.
LABEL_VALUES: dict[str, dict[str, frozenset[str] | None]] = {
    "skillwire_requests": {
        "method": KNOWN_METHODS | {OTHER},
        "outcome": frozenset({"ok", "error"}),
        "code": ERROR_CODES | {"", OTHER},
    },
    "skillwire_request_duration_seconds": {"method": KNOWN_METHODS | {OTHER}},
    "skillwire_reloads": {"outcome": RELOAD_OUTCOMES | {OTHER}},
    "skillwire_watch_events": {"backend": WATCH_BACKENDS | {OTHER}},
    "skillwire_store_reads": {"outcome": STORE_READ_OUTCOMES},
    "skillwire_signature_skills": {"status": SIGNATURE_STATUSES},
    "skillwire_bridge_upstream_up": {"upstream": None},
    "skillwire_bridge_tool_calls": {"tool": BRIDGE_TOOLS | {OTHER}, "outcome": TOOL_OUTCOMES | {OTHER}},
    "skillwire_bridge_approvals": {"kind": APPROVAL_KINDS | {OTHER}, "outcome": APPROVAL_OUTCOMES | {OTHER}},
}


def record_tool_call(tool: str, outcome: str) -> None:
    """A bridge tool call ended (`tool` is one of the bridge's own tool names, never a client's string)."""
    metrics().bridge_tool_calls.labels(bounded(tool, BRIDGE_TOOLS), bounded(outcome, TOOL_OUTCOMES)).inc()


def record_approval(kind: str, outcome: str) -> None:
    """An approval question of `kind` (skill | read) ended with `outcome`; a granted, refused or dismissed
    answer counts as asked too."""
    m = metrics().bridge_approvals
    kind = bounded(kind, APPROVAL_KINDS)
    if outcome in ("granted", "refused", "dismissed"):
        m.labels(kind, "asked").inc()
    m.labels(kind, bounded(outcome, APPROVAL_OUTCOMES)).inc()


def set_upstream_up(upstream: str, up: bool) -> None:
    """Whether the bridge holds a working connection to the upstream the operator named `upstream` (one of
    the labels configured at start: the bridge calls this for those alone)."""
    metrics().bridge_upstream_up.labels(upstream).set(1 if up else 0)


def observe_snapshot(
    skills: int, files: int, skipped: int, *, loaded_at: float | None, checked_at: float | None
) -> None:
    """The snapshot served: its sizes, when it was swapped in and when its source was last read (unix
    times; None leaves that gauge as it is). Called by `SkillCatalog.observe_gauges` only."""
    m = metrics()
    m.catalog_skills.set(skills)
    m.catalog_files.set(files)
    m.skipped_skills.set(skipped)
    if loaded_at is not None:
        m.index_loaded.set(loaded_at)
    if checked_at is not None:
        m.index_checked.set(checked_at)


def record_reload(outcome: str, seconds: float) -> None:
    """A reload ended: `swapped` (another catalog is served), `unchanged` or `failed`."""
    m = metrics()
    m.reloads.labels(bounded(outcome, RELOAD_OUTCOMES)).inc()
    m.reload_seconds.observe(seconds)


def record_watch_events(backend: str, count: int) -> None:
    """The catalog watcher read `count` events: inotify's as the kernel delivered them (a read of a served
    file delivers none), watchfiles' as it batched them (after its own filter)."""
    if count:
        metrics().watch_events.labels(bounded(backend, WATCH_BACKENDS)).inc(count)


def add_info_source(source: Callable[[], dict[str, str] | None]) -> None:
    """Labels of `skillwire_index_info` for the scraped process (the index id a replica serves, say)."""
    _info_sources.append(source)


class _InfoCollector:
    def collect(self) -> Iterator[Any]:
        from prometheus_client.core import GaugeMetricFamily

        for source in list(_info_sources):
            labels = source()
            if labels:
                family = GaugeMetricFamily(
                    "skillwire_index_info", "The index the scraped worker serves (value 1)", labels=list(labels)
                )
                family.add_metric(list(labels.values()), 1.0)
                yield family


def _registry() -> CollectorRegistry:
    from prometheus_client import REGISTRY, CollectorRegistry
    from prometheus_client.multiprocess import MultiProcessCollector

    directory = multiprocess_dir()
    if directory is None:
        return REGISTRY
    registry = CollectorRegistry()
    MultiProcessCollector(registry, path=directory)  # type: ignore[no-untyped-call]
    return registry


def exposition(accept: str | None = None) -> tuple[bytes, str]:
    """The scrape: every worker's series in one text (Prometheus or OpenMetrics, as `accept` asks)."""
    from prometheus_client import CollectorRegistry
    from prometheus_client.exposition import choose_encoder

    metrics().requests.flush()  # series exist (at zero) before anything happened; this worker's counts are exact
    encoder, content_type = choose_encoder(accept or "")
    body = encoder(_registry())
    info = CollectorRegistry()
    info.register(_InfoCollector())
    extra = encoder(info)
    if content_type.startswith("application/openmetrics-text"):
        body = body.removesuffix(b"# EOF\n") + extra  # one EOF, at the end
    else:
        body += extra
    return body, content_type


@contextmanager
def multiprocess_directory() -> Iterator[str]:
    """For forked workers: `PROMETHEUS_MULTIPROC_DIR` set (to a fresh temporary directory unless the
    environment names one) before anything imports prometheus_client, and a directory made here
    removed afterwards. Entered in the parent, before the first fork."""
    given = multiprocess_dir()
    if given is not None:
        os.makedirs(given, exist_ok=True)
        yield given
        return
    if "prometheus_client" in sys.modules:
        raise RuntimeError("prometheus_client was imported before its multi-process directory was set")
    made = tempfile.mkdtemp(prefix="skillwire-metrics-")
    os.environ[MULTIPROC_ENV] = made
    try:
        yield made
    finally:
        os.environ.pop(MULTIPROC_ENV, None)
        shutil.rmtree(made, ignore_errors=True)


def mark_process_dead(pid: int) -> None:
    """A worker exited: its live gauges stop counting (its counters still add up)."""
    if multiprocess_dir() is None:
        return
    from prometheus_client import multiprocess

    multiprocess.mark_process_dead(pid)  # type: ignore[no-untyped-call]
