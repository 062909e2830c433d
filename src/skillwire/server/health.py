"""`GET /healthz`: whether this replica has a snapshot to serve, which one, and how fresh it is.

For a load balancer: 200 with `"ready": true` once a snapshot is loaded, 503 before, and 503 with
`"draining": true` from the moment a replica is told to stop (SIGTERM), so the balancer sends nothing
new while in-flight requests finish; `GET /livez` is liveness only (200 while the process answers,
draining or not: a restart would not help a draining replica). A replica that
cannot reach its object store keeps serving its last good snapshot, so it stays ready and says so:
`"stale": true`, the error, and how long ago the pointer was last read (`checkedSecondsAgo`).

The endpoint takes no token. With per-caller views on (`--tokens`, audience rules) it says only
whether the replica is ready, which index it serves and whether that is stale: the whole catalog's
counts, the poll's error text (which can name a hidden skill) and when the last index arrived would
tell an anonymous caller that hidden skills exist, how many, and when they change.
"""

from __future__ import annotations

import os
import time
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from skillwire.catalog.catalog import SkillCatalog


class Readiness:
    """Whether this process still takes new work: `drain()` turns `/healthz` not-ready for good."""

    def __init__(self) -> None:
        self.draining = False

    def drain(self) -> None:
        self.draining = True


def health(catalog: SkillCatalog, *, per_caller: bool = False, readiness: Readiness | None = None) -> dict[str, Any]:
    snapshot = catalog._snapshot  # never triggers a scan: health must answer at once
    draining = readiness is not None and readiness.draining
    report: dict[str, Any] = {"ready": snapshot is not None and not draining, "pid": os.getpid()}  # which worker
    if draining:
        report["draining"] = True
    status = catalog.source_status()  # a published index's, or the git roots'; None for folders alone
    if per_caller:
        if status is not None:
            report["index"] = status.serving
            report["stale"] = status.failures > 0
        return report
    if snapshot is not None:
        report["skills"] = len(snapshot.skill_by_uri)
        report["files"] = len(snapshot.files)
    if status is not None:
        now = time.time()
        report["source"] = status.location
        # "index" names what is served (a published index's id, or a git root's commit), "serving" says which.
        report["index"] = status.serving
        report["serving"] = status.serving_kind
        report["loadedSecondsAgo"] = None if status.loaded_at is None else round(now - status.loaded_at, 3)
        report["checkedSecondsAgo"] = None if status.checked_at is None else round(now - status.checked_at, 3)
        report["stale"] = status.failures > 0
        report["lastError"] = status.last_error
    return report


def health_route(
    catalog: SkillCatalog, path: str = "/healthz", *, per_caller: bool = False, readiness: Readiness | None = None
) -> Route:
    """The route; `per_caller` when callers are answered from views (see the module docstring)."""

    async def endpoint(request: Request) -> JSONResponse:
        report = health(catalog, per_caller=per_caller, readiness=readiness)
        return JSONResponse(report, status_code=200 if report["ready"] else 503, headers={"Cache-Control": "no-store"})

    return Route(path, endpoint, methods=["GET"])


def liveness_route(path: str = "/livez") -> Route:
    async def endpoint(request: Request) -> JSONResponse:
        return JSONResponse({"alive": True, "pid": os.getpid()}, headers={"Cache-Control": "no-store"})

    return Route(path, endpoint, methods=["GET"])
