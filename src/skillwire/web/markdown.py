"""A skill's `SKILL.md` body as HTML for the catalog page: CommonMark with raw HTML off, links checked.

The project's Markdown parser (markdown-it-py, as `checks/links.py` reads links) renders it; its own
escaping is what makes text safe, and `html: False` makes `<script>` or `<img onerror>` in a body plain
text. What a link may point at is decided here, one rule for the page:

- `http:` and `https:` URLs stay links (`rel="noopener noreferrer nofollow"`), opened by the person;
- a relative link that resolves inside the skill to a file it lists, or to one of its folders, becomes a
  link to that file's or folder's page here;
- anything else (`javascript:`, `data:`, `file:`, a path leaving the skill, a file not listed) is shown as
  its text only, with no link.

Images are never loaded: an image of the skill becomes a link to its file page, any other image its alt
text. So a page makes no request to another origin, and the CSP (`web/app.py`) forbids one anyway.
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable, Mapping, Sequence
from typing import Any
from urllib.parse import unquote, urlsplit

from markdown_it import MarkdownIt
from markdown_it.common.utils import escapeHtml as escape_html
from markdown_it.token import Token
from markdown_it.utils import EnvType, OptionsDict

from skillwire.core.uri import in_scope, parent_of

__all__: list[str] = []  # internal: `serve --http` (at /) and `skillwire browse` are the interface

LinkTo = Callable[[str, bool], str]  # (file or folder URI, is a folder) -> URL of its page here


def skill_paths(root_uri: str, file_uris: Sequence[str]) -> dict[str, str]:
    """Each listed file's path inside the skill (percent-decoded, `/`-separated) -> its URI."""
    prefix = root_uri + "/"
    return {unquote(uri[len(prefix) :]): uri for uri in file_uris if uri != root_uri and in_scope(uri, root_uri)}


def _target(href: str, base_dir: str, paths: Mapping[str, str], root_uri: str) -> tuple[str, str, bool] | None:
    """("web", url, False) for an http(s) link, ("skill", uri, is_folder) inside the skill, or None."""
    parts = urlsplit(href)
    scheme = parts.scheme.lower()
    if scheme in ("http", "https"):
        return ("web", href, False) if parts.netloc else None
    if scheme or parts.netloc or not parts.path:
        return None  # another scheme, a protocol-relative URL, or a bare #fragment / ?query
    relative = unquote(parts.path)
    joined = posixpath.normpath(posixpath.join(base_dir, relative)) if not relative.startswith("/") else None
    if joined is None or joined == ".." or joined.startswith("../"):
        return None  # leaves the skill (or is absolute on whatever machine reads it)
    if joined in paths:
        return ("skill", paths[joined], False)
    folder = "" if joined == "." else joined + "/"
    if any(path.startswith(folder) for path in paths):
        return ("skill", root_uri if not folder else root_uri + "/" + folder.rstrip("/"), True)
    return None


class _Renderer:
    def __init__(self, paths: Mapping[str, str], root_uri: str, link_to: LinkTo, base_dir: str) -> None:
        self.paths = paths
        self.root_uri = root_uri
        self.link_to = link_to
        self.base_dir = base_dir
        self.open_tags: list[str] = []

    def _href(self, href: str) -> str | None:
        found = _target(href, self.base_dir, self.paths, self.root_uri)
        if found is None:
            return None
        kind, where, is_folder = found
        return where if kind == "web" else self.link_to(where, is_folder)

    def link_open(self, md: MarkdownIt, tokens: Sequence[Token], idx: int) -> str:
        token = tokens[idx]
        href = self._href(str(token.attrGet("href") or ""))
        if href is None:
            self.open_tags.append("</span>")
            return '<span class="dead-link">'
        self.open_tags.append("</a>")
        escape = escape_html
        external = ' rel="noopener noreferrer nofollow"' if href.startswith(("http://", "https://")) else ""
        return f'<a href="{escape(href)}"{external}>'

    def link_close(self, md: MarkdownIt, tokens: Sequence[Token], idx: int) -> str:
        return self.open_tags.pop() if self.open_tags else ""

    def image(self, md: MarkdownIt, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType) -> str:
        token = tokens[idx]
        escape = escape_html
        alt = escape(token.content)  # the alt text, as markdown-it collected it from the label
        found = _target(str(token.attrGet("src") or ""), self.base_dir, self.paths, self.root_uri)
        if found is not None and found[0] == "skill" and not found[2]:
            return f'<a class="image-link" href="{escape(self.link_to(found[1], False))}">[image: {alt}]</a>'
        return f'<span class="image-alt">[image: {alt}]</span>'


def render_markdown(body: str, *, skill_md_uri: str, file_uris: Sequence[str], link_to: LinkTo) -> str:
    """`body` (a SKILL.md without its frontmatter) as safe HTML; links resolved against the skill's files."""
    root_uri = parent_of(skill_md_uri) or skill_md_uri
    renderer = _Renderer(skill_paths(root_uri, file_uris), root_uri, link_to, ".")
    md = MarkdownIt("commonmark", {"html": False})

    def link_open(self: Any, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType) -> str:
        return renderer.link_open(md, tokens, idx)

    def link_close(self: Any, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType) -> str:
        return renderer.link_close(md, tokens, idx)

    def image(self: Any, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType) -> str:
        return renderer.image(md, tokens, idx, options, env)

    md.add_render_rule("link_open", link_open)
    md.add_render_rule("link_close", link_close)
    md.add_render_rule("image", image)
    html: str = md.render(body)
    return html
