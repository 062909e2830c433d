"""The catalog page's HTTP routes (Starlette), for `serve --http` at `/` and for `skillwire browse`.

Read-only: every route answers GET and HEAD only, except `POST /token`, which sets one cookie and changes
nothing on the server. Every answer carries the same safety headers (`SAFETY_HEADERS`): a Content-Security
-Policy that allows only this origin's own style sheet and script (`default-src 'none'`, no inline script,
no other origin, no framing), `X-Content-Type-Options: nosniff`, no referrer, `Cache-Control: no-store`
(a page depends on who asks). A file is downloaded as an attachment of type `application/octet-stream`,
never rendered by the browser, whatever its name or the type the server claims (an SVG with a script, a
file called `index.html`). Host and Origin are checked on every request with the same settings as the
MCP endpoint (`server/app.py`'s `transport_security`, extended by `--allow-host`): DNS rebinding
protection, as for `/mcp`.

With tokens (`serve --tokens`), the page asks for one once (`GET /token`, a form) and keeps it in an
HttpOnly, SameSite=Strict cookie (`POST /token`); it is never put in a URL, and nothing here logs it.
Each request gets its view from the token (`PageSite.view_for`), so a caller sees exactly what the wire
would show it, and a skill it may not see answers exactly as a skill that does not exist.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from importlib.resources import files
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, quote, urlencode

from mcp.server.transport_security import TransportSecurityMiddleware, TransportSecuritySettings
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import BaseRoute, Route

if TYPE_CHECKING:
    from skillwire.web.render import Pages
from skillwire.core.errors import ViewUnavailable
from skillwire.core.uri import child_name
from skillwire.web.view import CatalogView, FileRow, InstallTarget, SkillFacts

__all__: list[str] = []  # internal: `serve --http` (at /) and `skillwire browse` are the interface

TOKEN_COOKIE = "skillwire_token"
PAGE_SIZE = 50
_MAX_TOKEN_FORM_BYTES = 8192
SAFETY_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; "
        "form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "same-origin",  # no-referrer would make a browser send `Origin: null` with the token form
    "Cross-Origin-Opener-Policy": "same-origin",
    "Cross-Origin-Resource-Policy": "same-origin",
    "Cache-Control": "no-store",
    "Vary": "Cookie",
}
# Every route takes every method and answers the ones it does not serve itself (405, with the headers above):
# Starlette's own 405 would carry none of them.
_ALL_METHODS = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]
_STATIC_TYPES = {"page.css": "text/css; charset=utf-8", "search.js": "text/javascript; charset=utf-8"}
# One answer for "no such skill" and "a skill you may not see": the same status and the same bytes.
NOT_FOUND_TITLE = "Not found"
NOT_FOUND_MESSAGE = "There is no skill at this address."


@dataclass(frozen=True)
class PageSite:
    """What the routes need from whoever serves the page.

    `view_for(token)`: the caller's view (`token` is the cookie's, or None), or None when the page needs a
    token and this one is missing or not accepted (the page then asks for one). `target(request)`: the MCP
    endpoint the install lines name. `security`: the Host/Origin rules of the MCP endpoint beside it.
    """

    view_for: Callable[[str | None], Awaitable[CatalogView | None]]
    target: Callable[[Request], InstallTarget]
    security: TransportSecuritySettings
    page_size: int = PAGE_SIZE


def _with_headers(response: Response) -> Response:
    for name, value in SAFETY_HEADERS.items():
        response.headers.setdefault(name, value)
    return response


def attachment_name(uri: str) -> str:
    """A `Content-Disposition` value naming the file by the last part of its URI: an ASCII fallback with
    anything unusual replaced, and the exact name percent-encoded (RFC 6266 `filename*`)."""
    last = child_name(uri) or "file"  # the file's own name (decoded), not its URI segment
    plain = re.sub(r"[^A-Za-z0-9._-]", "_", last)[:120] or "file"
    return f"attachment; filename=\"{plain}\"; filename*=UTF-8''{quote(last, safe='')}"


class _Routes:
    def __init__(self, site: PageSite) -> None:
        self.site = site
        self._pages: Pages | None = None
        self.guard = TransportSecurityMiddleware(site.security)
        self.static = {name: files("skillwire.web").joinpath("static", name).read_bytes() for name in _STATIC_TYPES}

    # -- plumbing --------------------------------------------------------------------------------------

    @property
    def pages(self) -> Pages:
        # Jinja2, the templates and markdown-it load at the first page asked for, not at a server's start
        # (tests/e2e/test_serve_imports.py): most servers' pages are never opened.
        if self._pages is None:
            from skillwire.web.render import Pages

            self._pages = Pages()
        return self._pages

    def html(self, template: str, status: int = 200, **values: Any) -> Response:
        return _with_headers(HTMLResponse(self.pages.render(template, **values), status_code=status))

    def message(self, status: int, title: str, message: str) -> Response:
        return self.html("message.html", status, title=title, message=message, query="")

    def not_found(self) -> Response:
        return self.message(404, NOT_FOUND_TITLE, NOT_FOUND_MESSAGE)

    async def _checked(self, request: Request, methods: tuple[str, ...]) -> Response | None:
        refused = await self.guard.validate_request(request, is_post=False)
        if refused is not None:
            return _with_headers(refused)
        if request.method not in methods:
            response = self.message(405, "Not allowed", "This page only reads; nothing here can be changed.")
            response.headers["Allow"] = ", ".join(methods)
            return response
        return None

    async def _view(self, request: Request) -> CatalogView | Response:
        view = await self.site.view_for(request.cookies.get(TOKEN_COOKIE))
        if view is None:
            return _with_headers(RedirectResponse("/token", status_code=303))
        return view

    def route(self, path: str, handler: Callable[[Request, CatalogView], Awaitable[Response]]) -> Route:
        async def endpoint(request: Request) -> Response:
            refused = await self._checked(request, ("GET", "HEAD"))
            if refused is not None:
                return refused
            view = await self._view(request)
            if isinstance(view, Response):
                return view
            try:
                return await handler(request, view)
            except ViewUnavailable as exc:
                return self.message(502, "Not available", str(exc))

        return Route(path, endpoint, methods=_ALL_METHODS)

    async def _skill(self, request: Request, view: CatalogView, name: str = "skill") -> SkillFacts | None:
        uri = request.query_params.get(name)
        return None if not uri else await view.skill(uri)

    # -- pages -----------------------------------------------------------------------------------------

    async def listing(self, request: Request, view: CatalogView) -> Response:
        query = request.query_params.get("q", "").strip()
        if query:
            answer = await view.search(query[:500], self.site.page_size)
            return self.html("list.html", query=query, skills=answer.skills, matched=answer.matched, next_cursor=None)
        try:
            page = await view.page(request.query_params.get("cursor") or None, self.site.page_size)
        except ValueError:
            return self.message(
                400, "Page link out of date", "This page link is not valid here; start again from the first page."
            )
        return self.html(
            "list.html",
            query="",
            skills=page.skills,
            count=page.count,
            next_cursor=page.next_cursor,
            next_query=urlencode({"cursor": page.next_cursor or ""}),
        )

    async def skill(self, request: Request, view: CatalogView) -> Response:
        facts = await self._skill(request, view, "uri")
        if facts is None:
            return self.not_found()
        data: bytes | None = None
        refused: str | None = None
        row = next((f for f in facts.files if f.uri == facts.entry.uri), None)
        if row is not None:
            read = await view.read(facts, row)
            data, refused = read.data, read.refused
        html = self.pages.skill_page(facts, data, refused, self.site.target(request))
        return _with_headers(HTMLResponse(html))

    async def folder(self, request: Request, view: CatalogView) -> Response:
        facts = await self._skill(request, view)
        from skillwire.web.render import folder_items

        uri = request.query_params.get("uri", "")
        items = None if facts is None else folder_items(facts, uri)
        if facts is None or items is None:
            return self.not_found()
        return _with_headers(HTMLResponse(self.pages.folder_page(facts, uri, items)))

    def _row(self, request: Request, facts: SkillFacts | None) -> FileRow | None:
        uri = request.query_params.get("uri")
        return None if facts is None else next((f for f in facts.files if f.uri == uri), None)

    async def file(self, request: Request, view: CatalogView) -> Response:
        facts = await self._skill(request, view)
        row = self._row(request, facts)
        if facts is None or row is None:
            return self.not_found()
        read = await view.read(facts, row)
        from skillwire.web.markdown import skill_paths
        from skillwire.web.render import skill_root

        root = skill_root(facts.entry.uri)
        paths = {uri: path for path, uri in skill_paths(root, [f.uri for f in facts.files]).items()}
        return _with_headers(HTMLResponse(self.pages.file_page(facts, row, read.data, read.refused, paths)))

    async def download(self, request: Request, view: CatalogView) -> Response:
        facts = await self._skill(request, view)
        row = self._row(request, facts)
        if facts is None or row is None:
            return self.not_found()
        read = await view.read(facts, row)
        if read.data is None:
            return self.message(502, "Refused", f"Not downloaded: {read.refused}")
        response = Response(read.data, media_type="application/octet-stream")
        response.headers["Content-Disposition"] = attachment_name(row.uri)
        # A download is never rendered, even if a browser ignored the attachment: sandboxed, no script.
        response.headers["Content-Security-Policy"] = "default-src 'none'; sandbox"
        return _with_headers(response)

    # -- the token form --------------------------------------------------------------------------------

    async def token(self, request: Request) -> Response:
        refused = await self._checked(request, ("GET", "HEAD", "POST"))
        if refused is not None:
            return refused
        if request.method != "POST":
            return self.html("token.html", wrong=False, query="")
        if not request.headers.get("origin"):
            # Browsers send Origin on every form POST; without one this is not the page's own form.
            return self.message(403, "Refused", "A token is accepted only from this page's own form.")
        body = b""
        async for chunk in request.stream():
            body += chunk
            if len(body) > _MAX_TOKEN_FORM_BYTES:
                return self.message(413, "Too large", "That form is larger than a token can be.")
        token = (parse_qs(body.decode("utf-8", "replace")).get("token") or [""])[0].strip()
        if not token or await self.site.view_for(token) is None:
            return self.html("token.html", 401, wrong=True, query="")
        response = RedirectResponse("/", status_code=303)
        response.set_cookie(
            TOKEN_COOKIE,
            token,
            httponly=True,
            samesite="strict",
            secure=request.url.scheme == "https",
            path="/",
        )
        return _with_headers(response)

    async def static_file(self, request: Request) -> Response:
        refused = await self._checked(request, ("GET", "HEAD"))
        if refused is not None:
            return refused
        name = request.path_params["name"]
        if name not in self.static:
            return self.message(404, NOT_FOUND_TITLE, "No such file.")
        response = Response(self.static[name], media_type=_STATIC_TYPES[name])
        response.headers["Cache-Control"] = "public, max-age=600"
        return _with_headers(response)


async def no_icon(request: Request) -> Response:
    """Browsers ask for `/favicon.ico` on their own; an empty answer, not a 404 in every console."""
    return _with_headers(Response(status_code=204))


def page_routes(site: PageSite) -> list[BaseRoute]:
    """The catalog page's routes, to add beside `/mcp` (or to serve alone, as `browse` does)."""
    routes = _Routes(site)
    return [
        routes.route("/", routes.listing),
        routes.route("/skill", routes.skill),
        routes.route("/dir", routes.folder),
        routes.route("/file", routes.file),
        routes.route("/download", routes.download),
        Route("/token", routes.token, methods=_ALL_METHODS),
        Route("/static/{name}", routes.static_file, methods=_ALL_METHODS),
        Route("/favicon.ico", no_icon, methods=["GET", "HEAD"]),
    ]
