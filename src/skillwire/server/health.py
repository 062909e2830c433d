"""`GET /healthz`: whether this replica has a snapshot to serve, which one, and how fresh it is.

For a load balancer: 200 with `"ready": true` once a snapshot is loaded, 503 before. A replica that
cannot reach its object store keeps serving its last good snapshot, so it stays ready and says so:
`"stale": true`, the error, and how long ago the pointer was last read (`checkedSecondsAgo`).
"""

from __future__ import annotations

import os
import time
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from skillwire.catalog.catalog import SkillCatalog


def health(catalog: SkillCatalog) -> dict[str, Any]:
    snapshot = catalog._snapshot  # never triggers a scan: health must answer at once
    report: dict[str, Any] = {"ready": snapshot is not None, "pid": os.getpid()}  # which --workers process
    if snapshot is not None:
        report["skills"] = len(snapshot.skill_by_uri)
        report["files"] = len(snapshot.files)
    status = getattr(catalog, "status", None)  # a PublishedCatalog's StoreStatus
    if status is not None:
        now = time.time()
        report["source"] = str(getattr(catalog, "location", ""))
        report["index"] = status.index_id
        report["loadedSecondsAgo"] = None if status.loaded_at is None else round(now - status.loaded_at, 3)
        report["checkedSecondsAgo"] = None if status.checked_at is None else round(now - status.checked_at, 3)
        report["stale"] = status.failures > 0
        report["lastError"] = status.last_error
    return report


def health_route(catalog: SkillCatalog, path: str = "/healthz") -> Route:
    async def endpoint(request: Request) -> JSONResponse:
        report = health(catalog)
        return JSONResponse(report, status_code=200 if report["ready"] else 503, headers={"Cache-Control": "no-store"})

    return Route(path, endpoint, methods=["GET"])
