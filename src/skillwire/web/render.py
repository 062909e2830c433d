"""HTML of the catalog page: the one owner of escaping for everything the page shows.

Jinja2 with autoescape on for every template (`select_autoescape` would leave a template named otherwise
raw; here it is on unconditionally), so every value placed in a template is HTML-escaped unless it is
`Markup`, and the only `Markup` the page makes is `web/markdown.py`'s rendering (markdown-it-py's own
escaping, raw HTML off). Names and other one-line strings from a server pass `core/display.escape` first
(the `line` filter): a right-to-left override or a control character in a name is shown as `\\u202e`,
never obeyed. Values in copy-ready commands are shell-quoted (`shlex.quote`) or JSON-encoded before the
HTML escaping, so a URI can neither break the HTML nor the command a person pastes.

Why Jinja2 (the one new dependency): autoescape by default is the property that matters, it compiles each
template once to Python (a list page of 50 skills renders in well under a millisecond), and it is small,
pure Python and already what most of the ecosystem audits. Building HTML with f-strings would make every
call site its own escaping decision; that is what this module exists to avoid.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from importlib.resources import files
from typing import Any
from urllib.parse import unquote, urlencode

import jinja2
from markupsafe import Markup

from skillwire.core.display import escape
from skillwire.core.errors import NotASkill
from skillwire.core.json import JSONValue
from skillwire.core.manifest import human_size
from skillwire.core.provenance import Provenance
from skillwire.core.skill_md import split_skill_md
from skillwire.core.uri import in_scope, parent_of
from skillwire.web.markdown import render_markdown, skill_paths
from skillwire.web.view import FileRow, InstallTarget, SkillFacts

__all__: list[str] = []  # internal: `serve --http` (at /) and `skillwire browse` are the interface

TEXT_SHOWN_BYTES = 512 * 1024  # a text file larger than this is shown cut, with the rest downloadable


def skill_root(skill_md_uri: str) -> str:
    """The folder URI of a skill, from its `SKILL.md` URI."""
    return parent_of(skill_md_uri) or skill_md_uri


def skill_url(uri: str) -> str:
    return "/skill?" + urlencode({"uri": uri})


def file_url(skill: str, uri: str, *, download: bool = False) -> str:
    return ("/download?" if download else "/file?") + urlencode({"skill": skill, "uri": uri})


def folder_url(skill: str, uri: str) -> str:
    return "/dir?" + urlencode({"skill": skill, "uri": uri})


def one_line(value: object, limit: int = 300) -> str:
    """A server's string as one visible line (`core/display.escape`); autoescape then makes it HTML."""
    return escape(str(value), limit)


def frontmatter_value(value: JSONValue) -> str:
    """A frontmatter value as text: strings as they are (escaped for display), anything else as JSON."""
    if isinstance(value, str):
        return escape(value, 4000)
    return escape(json.dumps(value, ensure_ascii=False, sort_keys=True), 4000)


@dataclass(frozen=True)
class FolderItem:
    name: str
    uri: str
    is_folder: bool
    row: FileRow | None


def folder_items(facts: SkillFacts, folder_uri: str) -> list[FolderItem] | None:
    """The direct children of a folder of the skill, from its manifest (no request); None: not a folder."""
    root = skill_root(facts.entry.uri)
    if not in_scope(folder_uri, root):
        return None
    prefix = folder_uri + "/"
    folders: dict[str, str] = {}
    items: list[FolderItem] = []
    for row in facts.files:
        if row.uri == folder_uri or not in_scope(row.uri, folder_uri):
            continue
        rest = row.uri[len(prefix) :]
        head, slash, _ = rest.partition("/")
        if slash:
            folders.setdefault(head, prefix + head)
        else:
            items.append(FolderItem(unquote(head), row.uri, False, row))
    if not items and not folders:
        return None
    # Names as the files were named (URI segments are percent-encoded); the `line` filter escapes them.
    items.extend(FolderItem(unquote(name), uri, True, None) for name, uri in folders.items())
    return sorted(items, key=lambda item: (not item.is_folder, item.name))


def install_lines(target: InstallTarget, skill_md_uri: str) -> list[tuple[str, str]]:
    """(host, text to paste) for each host the README documents, for this server and this skill."""
    name, url = target.name, target.url
    q = shlex.quote
    bridge_args = ["bridge", "--server", f"{name}={url}"]
    vscode = {"servers": {name: {"type": "http", "url": url}}}
    cursor = {"mcpServers": {name: {"url": url}}}
    return [
        ("Claude Code (native)", f"claude mcp add --transport http {q(name)} {q(url)}"),
        ("Codex (through the bridge)", f"codex mcp add skills -- skillwire bridge --server {q(name + '=' + url)}"),
        (
            "Gemini CLI (through the bridge)",
            f"gemini mcp add --scope user skills skillwire -- bridge --server {q(name + '=' + url)}",
        ),
        ("VS Code (.vscode/mcp.json)", json.dumps(vscode, indent=2)),
        ("Cursor (.cursor/mcp.json)", json.dumps(cursor, indent=2)),
        ("The bridge, for any other host", "skillwire " + " ".join(q(a) for a in bridge_args)),
        # --for takes claude, codex, copilot, cursor, gemini or agents (`skillwire pull --help`).
        ("Copy this skill into a host's skills folder", f"skillwire pull {q(skill_md_uri)} --for claude {q(url)}"),
    ]


def provenance_text(found: Provenance | str | None) -> str:
    if found is None:
        return "the entry names no source repository"
    if isinstance(found, str):
        return f"the entry's source annotation is unusable: {found}"
    return found.describe()


class Pages:
    """The page's templates, compiled once; each method returns one page's HTML."""

    def __init__(self) -> None:
        self.env = jinja2.Environment(
            loader=jinja2.FunctionLoader(self._template_source),
            autoescape=True,  # every template, whatever its name: the one escaping rule of the page
            undefined=jinja2.StrictUndefined,
            trim_blocks=True,
            lstrip_blocks=True,
        )
        self.env.filters["line"] = one_line
        self.env.filters["size"] = human_size
        self.env.filters["fm"] = frontmatter_value
        self.env.globals.update(skill_url=skill_url, file_url=file_url, folder_url=folder_url)

    @staticmethod
    def _template_source(name: str) -> str:
        return files("skillwire.web").joinpath("templates", name).read_text(encoding="utf-8")

    def render(self, template: str, **values: Any) -> str:
        return self.env.get_template(template).render(**values)

    def skill_page(self, facts: SkillFacts, skill_md: bytes | None, refused: str | None, target: InstallTarget) -> str:
        body_html: Markup | None = None
        if skill_md is not None:
            text = skill_md.decode("utf-8", "replace")
            try:
                body = split_skill_md(text)[1]
            except NotASkill:
                body = text
            link_to = lambda uri, is_folder: (  # noqa: E731
                folder_url(facts.entry.uri, uri) if is_folder else file_url(facts.entry.uri, uri)
            )
            body_html = Markup(
                render_markdown(
                    body, skill_md_uri=facts.entry.uri, file_uris=[f.uri for f in facts.files], link_to=link_to
                )
            )
        root = skill_root(facts.entry.uri)
        return self.render(
            "skill.html",
            facts=facts,
            entry=facts.entry,
            root=root,
            paths={uri: path for path, uri in skill_paths(root, [f.uri for f in facts.files]).items()},
            body=body_html,
            refused=refused,
            provenance=provenance_text(facts.provenance),
            installs=install_lines(target, facts.entry.uri),
        )

    def folder_page(self, facts: SkillFacts, folder_uri: str, items: Sequence[FolderItem]) -> str:
        root = skill_root(facts.entry.uri)
        shown = "/" + folder_uri[len(root) :].lstrip("/")
        parent = parent_of(folder_uri) if folder_uri != root else None
        return self.render("folder.html", facts=facts, folder=shown, parent=parent, items=items, root=root)

    def file_page(
        self, facts: SkillFacts, row: FileRow, data: bytes | None, refused: str | None, paths: Mapping[str, str]
    ) -> str:
        text: str | None = None
        cut = False
        if data is not None and b"\x00" not in data[:TEXT_SHOWN_BYTES]:
            try:
                text = data[:TEXT_SHOWN_BYTES].decode("utf-8")
            except UnicodeDecodeError as exc:
                # A cut in the middle of a character is still text; anything else is shown as binary.
                text = data[: exc.start].decode("utf-8") if exc.start >= len(data[:TEXT_SHOWN_BYTES]) - 3 else None
            cut = len(data) > TEXT_SHOWN_BYTES
        return self.render(
            "file.html",
            facts=facts,
            row=row,
            path=paths.get(row.uri, row.uri),
            text=text,
            cut=cut,
            refused=refused,
            root=skill_root(facts.entry.uri),
        )
