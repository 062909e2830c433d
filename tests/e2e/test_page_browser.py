"""The catalog page in a real browser (issue 39): Debian's chromium, headless, through Playwright
(`tests/support/browser.py` says why). Each test watches every page it opens for dialogs, console errors
(a CSP violation is one), uncaught errors and requests to anywhere but the page's own origin, and asserts
none happened. Screenshots at a phone's and a desktop's width go to tests/artifacts/page/ (git-ignored), and
the layout checks assert that no page is wider than the window."""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlencode

import pytest

from servers import LyingServer, free_port, running_http_server
from servers.hostile_server import running_hostile_server
from support.browser import DESKTOP, PHONE, assert_fits, chromium, screenshot, watched_page
from support.page import ARTIFACTS, browse, page_base, write_hostile_corpus
from support.servers import CORPUS, EXAMPLES, serve_http

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page, ViewportSize

try:
    from playwright.sync_api import Error as PlaywrightError
except ImportError:  # the browser fixture skips every test then
    PlaywrightError = Exception  # type: ignore[misc,assignment]

REPO_ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO_ROOT))
from bench.peers import typescript_argv, typescript_missing  # noqa: E402  (bench/ is not an installed package)

WIDTHS: dict[str, ViewportSize] = {"phone": PHONE, "desktop": DESKTOP}


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with chromium() as running:
        yield running


@pytest.fixture(scope="module")
def examples_page() -> Iterator[str]:
    with serve_http([str(EXAMPLES), "--no-watch", "--no-digest-cache"]) as server:
        yield page_base(server.url)


def listed(page: Page) -> list[str]:
    return [text.strip() for text in page.locator("ul.skills .uri").all_inner_texts()]


def skill_url(base: str, uri: str) -> str:
    return f"{base}/skill?{urlencode({'uri': uri})}"


# -- the bundled examples ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("width", WIDTHS)
def test_list_search_skill_folder_file_and_download_on_the_examples(
    browser: Browser, examples_page: str, width: str
) -> None:
    with watched_page(browser, examples_page, WIDTHS[width]) as (page, watched):
        page.goto(examples_page + "/")
        assert page.locator("#count").inner_text() == "5 skills"
        assert len(listed(page)) == 5
        assert_fits(page)
        screenshot(page, ARTIFACTS, f"examples-list-{width}")

        # Search without script: the form's own GET.
        page.fill("#q", "pdf forms")
        page.press("#q", "Enter")
        page.wait_for_url("**/?q=pdf+forms")
        assert listed(page)[0] == "skill://pdf-processing/SKILL.md"

        # Search as you type: our script replaces the results in place, no navigation.
        page.goto(examples_page + "/")
        page.locator("#q").press_sequentially("refund", delay=20)
        page.locator("#count", has_text="match").wait_for()
        assert page.url == examples_page + "/"
        as_typed = listed(page)
        assert as_typed[0] == "skill://acme/billing/refunds/SKILL.md"
        page.goto(examples_page + "/?q=refund")
        assert listed(page) == as_typed  # the same answer as the form's, from the same engine

        # A skill page: rendered SKILL.md, its facts, a nested skill, copy-ready lines.
        page.goto(examples_page + "/")
        page.get_by_role("link", name="code-review", exact=True).click()
        assert page.locator("#skill-md h1").inner_text() == "Code review"
        assert page.locator("#listed").inner_text() == "listed"
        assert page.locator("#signature").inner_text() == "not signed"
        assert page.locator("#nested a").inner_text() == "security-audit"
        assert "claude mcp add --transport http skills" in page.locator(".install").inner_text()
        assert_fits(page)
        screenshot(page, ARTIFACTS, f"examples-skill-{width}")

        # Folders down to a nested skill's file, then its download.
        page.get_by_role("link", name="browse folders").click()
        page.get_by_role("link", name="security-audit/").click()
        page.get_by_role("link", name="references/").click()
        assert_fits(page)
        page.get_by_role("link", name="owasp.md").click()
        owasp = EXAMPLES / "code-review" / "security-audit" / "references" / "owasp.md"
        assert page.locator("#text").inner_text() == owasp.read_text()
        with page.expect_download() as download_info:
            page.locator("#download").click()
        download = download_info.value
        assert download.suggested_filename == "owasp.md"
        assert Path(download.path()).read_bytes() == owasp.read_bytes()
        watched.assert_nothing_happened()


# -- a real corpus ----------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def corpus_page() -> Iterator[str]:
    if not CORPUS.is_dir():
        pytest.skip(f"no corpus at {CORPUS} (../shared/corpora/awesome-copilot is optional)")
    with serve_http([str(CORPUS), "--no-watch", "--no-digest-cache"], timeout=180) as server:
        yield page_base(server.url)


@pytest.mark.parametrize("width", WIDTHS)
def test_the_awesome_copilot_corpus(browser: Browser, corpus_page: str, width: str) -> None:
    with watched_page(browser, corpus_page, WIDTHS[width]) as (page, watched):
        page.goto(corpus_page + "/")
        count = int(page.locator("#count").inner_text().split()[0])
        assert count > 100
        first_page = listed(page)
        assert len(first_page) == 50
        assert_fits(page)
        screenshot(page, ARTIFACTS, f"corpus-list-{width}")
        page.locator("a[rel=next]").click()
        second_page = listed(page)
        assert second_page[0] > first_page[-1]  # keyset order, as skills/list pages
        assert_fits(page)

        page.goto(corpus_page + "/?q=git+commit")
        assert page.locator("ul.skills li").count() >= 1
        # The first few skills of the search answer and the list: each page fits, its SKILL.md renders.
        for uri in (listed(page)[:2] + first_page[:4])[:5]:
            page.goto(skill_url(corpus_page, uri))
            assert page.locator("#skill-md").count() == 1, uri
            assert_fits(page)
        screenshot(page, ARTIFACTS, f"corpus-skill-{width}")

        # A skill with a folder: browse into it, open a file and download it.
        with_folder = next(
            uri
            for uri in first_page + second_page
            if any(p.is_dir() for p in (CORPUS / uri.removeprefix("skill://").removesuffix("/SKILL.md")).iterdir())
        )
        page.goto(skill_url(corpus_page, with_folder))
        page.get_by_role("link", name="browse folders").click()
        page.locator("li.dir a").first.click()
        assert_fits(page)
        page.locator("li.file a").first.click()
        with page.expect_download() as download_info:
            page.locator("#download").click()
        relative = page.locator("h1").inner_text().lstrip("/")
        folder = CORPUS / with_folder.removeprefix("skill://").removesuffix("/SKILL.md")
        assert Path(download_info.value.path()).read_bytes() == (folder / relative).read_bytes()
        watched.assert_nothing_happened()


# -- a hostile corpus executes nothing --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def hostile_page(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    root = write_hostile_corpus(tmp_path_factory.mktemp("hostile") / "skills")
    with serve_http([str(root), "--no-watch", "--no-digest-cache"]) as server:
        yield page_base(server.url)


def test_a_hostile_corpus_runs_nothing_and_loads_nothing_from_elsewhere(browser: Browser, hostile_page: str) -> None:
    skill = "skill://evil/SKILL.md"
    with watched_page(browser, hostile_page, PHONE) as (page, watched):
        page.add_init_script("window.__ran = []; window.alert = (m) => window.__ran.push(String(m));")
        page.goto(hostile_page + "/")
        page.goto(hostile_page + "/?q=evil")
        page.goto(skill_url(hostile_page, skill))
        assert_fits(page)
        screenshot(page, ARTIFACTS, "hostile-skill-phone")
        # Every link the rendered SKILL.md kept is ours or the one https link; follow ours.
        hrefs = page.locator("#skill-md a").evaluate_all("links => links.map(a => a.getAttribute('href'))")
        assert all(h.startswith(("/file?", "/dir?", "https://example.invalid/page")) for h in hrefs), hrefs
        assert page.locator("#skill-md [onerror], #skill-md img, #skill-md svg, #skill-md iframe").count() == 0
        # Names are shown with their hidden characters made visible, never obeyed.
        assert "\\u202egnp.exe bell\\x07 end" in page.locator("p.description").inner_text()
        assert "read\\u202eme.md" in page.locator("#files").inner_text()
        files = page.locator("#files td.path a").evaluate_all("links => links.map(a => a.href)")
        for href in files + [hostile_page + h for h in hrefs if h.startswith("/")]:
            page.goto(href)
            assert_fits(page)
        page.goto(f"{hostile_page}/dir?{urlencode({'skill': skill, 'uri': 'skill://evil/deep/er'})}")
        assert page.locator("#folder li.file a").inner_text() == "<b>bold<i>.md"
        # index.html and the SVG are downloads, never documents of this origin.
        for name in ("index.html", "pic.svg"):
            page.goto(f"{hostile_page}/file?{urlencode({'skill': skill, 'uri': f'skill://evil/{name}'})}")
            shown_at = page.url
            with page.expect_download() as download_info:
                page.locator("#download").click()
            assert download_info.value.suggested_filename == name
            assert page.url == shown_at
        # Opening a download's address directly starts a download, and renders nothing either.
        direct = f"{hostile_page}/download?{urlencode({'skill': skill, 'uri': 'skill://evil/index.html'})}"
        with page.expect_download(), pytest.raises(PlaywrightError, match="Download is starting"):
            page.goto(direct)  # Playwright reports a navigation that became a download so
        assert page.evaluate("window.__ran") == []
    watched.assert_nothing_happened()
    assert watched.requests, "the watch saw no request at all"


# -- per-caller catalogs ----------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def tokens_page(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    tokens = tmp_path_factory.mktemp("tokens") / "tokens.json"
    entries = [
        {"client": "billing", "token": "tok-billing-secret", "audiences": ["acme"]},
        {"client": "docs", "token": "tok-docs-secret", "audiences": ["docs"]},
    ]
    tokens.write_text(json.dumps({"tokens": entries}))
    args = [str(EXAMPLES), "--no-watch", "--no-digest-cache", "--tokens", str(tokens)]
    args += ["--audience", "skill://acme=acme", "--audience", "skill://pdf-processing=docs"]
    with serve_http(args) as server:
        yield page_base(server.url)


def sign_in(page: Page, base: str, token: str) -> None:
    page.goto(base + "/")
    assert page.url == base + "/token"
    page.fill("#token", token)
    page.get_by_role("button", name="Continue").click()
    page.wait_for_url(base + "/")


def test_with_tokens_a_caller_sees_exactly_its_audiences_skills(browser: Browser, tokens_page: str) -> None:
    hidden = "skill://pdf-processing/SKILL.md"
    absent = "skill://pdf-processing-nothing/SKILL.md"
    with watched_page(browser, tokens_page) as (page, watched):
        page.goto(tokens_page + "/")
        page.fill("#token", "not-a-token")
        page.get_by_role("button", name="Continue").click()
        page.locator("#wrong").wait_for()
        sign_in(page, tokens_page, "tok-billing-secret")
        assert listed(page) == [
            "skill://acme/billing/refunds/SKILL.md",
            "skill://code-review/SKILL.md",
            "skill://code-review/security-audit/SKILL.md",
            "skill://git-workflow/SKILL.md",
        ]
        assert page.evaluate("document.cookie") == ""  # HttpOnly: no script of the page can read it
        shown = []
        for uri in (hidden, absent):
            response = page.goto(skill_url(tokens_page, uri))
            assert response is not None
            assert response.status == 404
            shown.append(page.locator("main").inner_html())
        assert shown[0] == shown[1]
        page.goto(tokens_page + "/?q=pdf")
        assert listed(page) == []
        screenshot(page, ARTIFACTS, "tokens-search-desktop")
    assert not any("tok-billing-secret" in url for url in watched.requests)
    # The refused token (401) and the two pages that do not exist (404): the console's note of each status.
    statuses = [e for e in watched.errors if e.startswith("Failed to load resource: the server responded")]
    assert [re.findall(r"status of (\d+)", e) for e in statuses] == [["401"], ["404"], ["404"]]
    watched.errors = [e for e in watched.errors if e not in statuses]
    watched.assert_nothing_happened()
    with watched_page(browser, tokens_page) as (page, watched):
        sign_in(page, tokens_page, "tok-docs-secret")
        assert "skill://pdf-processing/SKILL.md" in listed(page)
        assert "skill://acme/billing/refunds/SKILL.md" not in listed(page)
        watched.assert_nothing_happened()


# -- skillwire browse -------------------------------------------------------------------------------------------


def browsed_skills(browser: Browser, base: str) -> list[tuple[str, str]]:
    with watched_page(browser, base) as (page, watched):
        page.goto(base + "/")
        names = page.locator("ul.skills a.name").all_inner_texts()
        skills = list(zip(names, listed(page), strict=True))
        watched.assert_nothing_happened()
    return skills


@pytest.fixture(scope="module")
def typescript_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    missing = typescript_missing()
    if missing is not None:
        pytest.skip(missing)
    port = free_port()
    log = tmp_path_factory.mktemp("ts") / "server.log"
    with running_http_server(typescript_argv(EXAMPLES, port), port, log):
        yield f"http://127.0.0.1:{port}/mcp"


def test_browse_shows_the_same_skills_from_skillwire_and_from_the_typescript_sdk(
    browser: Browser, examples_page: str, typescript_server: str, own_cache_env: dict[str, str]
) -> None:
    with browse(examples_page + "/mcp", env=own_cache_env) as ours:
        from_skillwire = browsed_skills(browser, ours)
    with browse(typescript_server, env=own_cache_env) as theirs:
        from_typescript = browsed_skills(browser, theirs)
        with watched_page(browser, theirs, PHONE) as (page, watched):
            page.goto(skill_url(theirs, "skill://code-review/SKILL.md"))
            assert page.locator("#skill-md h1").inner_text() == "Code review"
            assert page.locator("#nested a").inner_text() == "security-audit"
            assert_fits(page)
            screenshot(page, ARTIFACTS, "browse-typescript-skill-phone")
            watched.assert_nothing_happened()
    assert len(from_skillwire) == 5
    assert from_typescript == from_skillwire


def test_browse_shows_a_file_whose_digest_the_server_lies_about_as_refused(
    browser: Browser, lying: LyingServer, own_cache_env: dict[str, str]
) -> None:
    skill = "skill://lie/bad-file/SKILL.md"
    with browse(lying.url, env=own_cache_env) as base, watched_page(browser, base) as (page, watched):
        page.goto(skill_url(base, skill))
        page.locator("#files a", has_text=re.compile(r"^references/data\.md$")).click()
        refused = page.locator("#refused").inner_text()
        assert "digest mismatch" in refused
        assert page.locator("#text").count() == 0
        assert page.locator("#download").count() == 0
        screenshot(page, ARTIFACTS, "browse-refused-desktop")
        page.goto(skill_url(base, "skill://lie/good/SKILL.md"))
        page.locator("#files a", has_text="references/guide.md").click()
        assert page.locator("#text").inner_text().startswith("# Guide")
        watched.assert_nothing_happened()


def test_browse_of_a_hostile_server_refuses_every_lie_and_runs_nothing(
    browser: Browser, tmp_path: Path, own_cache_env: dict[str, str]
) -> None:
    """tests/servers/hostile_server.py lies one way per skill; every skill page is opened, each lie about a
    SKILL.md is refused rather than rendered, and nothing the server sent runs or loads anything."""
    with running_hostile_server(tmp_path) as hostile, browse(hostile.url, env=own_cache_env) as base:
        with watched_page(browser, base, PHONE) as (page, watched):
            page.goto(base + "/")
            uris = listed(page)
            assert "skill://hostile/honest/SKILL.md" in uris
            refused: dict[str, str] = {}
            for uri in uris:
                page.goto(skill_url(base, uri))
                assert_fits(page)
                if page.locator("#skill-md-refused").count():
                    refused[uri.split("/")[-2]] = page.locator("#skill-md-refused").inner_text()
            assert {"wrong-size", "wrong-digest", "frontmatter-swap"} <= refused.keys(), refused
            assert "honest" not in refused
            assert "Exfiltrate" not in page.content()
            page.goto(skill_url(base, "skill://hostile/wrong-digest-file/SKILL.md"))
            page.locator("#files a", has_text="references/data.md").click()
            assert "digest mismatch" in page.locator("#refused").inner_text()
        watched.assert_nothing_happened()
