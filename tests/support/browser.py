"""A real browser for the catalog page's tests: Debian's `chromium`, headless, driven by Playwright for Python.

Why Playwright rather than the DevTools protocol by hand: the tests need dialogs, console errors, page errors,
every network request, downloads, viewports and screenshots, which Playwright gives as events and calls on one
connection, with waiting done right; the pip wheel carries its own driver, and `executable_path` points it at
the system browser (`playwright install`, which downloads browser builds, is never run). Chromium comes from
Debian through `support.apt_tool` (installed when missing and this is root), as Prometheus and HAProxy do;
without it, or without the `playwright` package, the tests skip saying why.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from support.apt_tool import apt_tool

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page, ViewportSize

PHONE: ViewportSize = {"width": 375, "height": 740}
DESKTOP: ViewportSize = {"width": 1280, "height": 900}


@contextmanager
def chromium() -> Iterator[Browser]:
    executable = apt_tool("chromium")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.skip("the playwright package is not installed (pip install 'playwright>=1.40,<2')")
    with sync_playwright() as playwright:
        # Root cannot use Chromium's user-namespace sandbox; the pages opened are our own server's.
        args = ["--no-sandbox"] if os.geteuid() == 0 else []
        browser = playwright.chromium.launch(executable_path=executable, headless=True, args=args)
        try:
            yield browser
        finally:
            browser.close()


@dataclass
class Watched:
    """Everything a page did that a safe page does not: dialogs (alert, confirm, prompt), console errors
    (a CSP violation is one), uncaught errors, and requests anywhere but `base`."""

    base: str
    dialogs: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    requests: list[str] = field(default_factory=list)

    def attach(self, page: Page) -> None:
        def on_dialog(dialog: Any) -> None:
            self.dialogs.append(f"{dialog.type}: {dialog.message}")
            dialog.dismiss()

        page.on("dialog", on_dialog)
        page.on("console", lambda message: self.errors.append(message.text) if message.type == "error" else None)
        page.on("pageerror", lambda error: self.errors.append(str(error)))
        page.on("request", lambda request: self.requests.append(request.url))

    @property
    def foreign(self) -> list[str]:
        return [url for url in self.requests if not url.startswith(self.base + "/")]

    def assert_nothing_happened(self) -> None:
        assert self.dialogs == [], self.dialogs
        assert self.errors == [], self.errors
        assert self.foreign == [], self.foreign


@contextmanager
def watched_page(browser: Browser, base: str, viewport: ViewportSize = DESKTOP) -> Iterator[tuple[Page, Watched]]:
    context = browser.new_context(viewport=viewport, accept_downloads=True)
    try:
        page = context.new_page()
        watched = Watched(base)
        watched.attach(page)
        yield page, watched
    finally:
        context.close()


def overflow(page: Page) -> dict[str, Any]:
    """How wide the document is against the viewport, and the first elements that stick out (outside a
    scrolling box of their own)."""
    found: dict[str, Any] = page.evaluate(
        """() => {
          const root = document.documentElement;
          const width = root.clientWidth;
          const wide = [...document.body.querySelectorAll('*')]
            .filter(e => e.getBoundingClientRect().right > width + 1 && !e.closest('pre, .scroll'))
            .slice(0, 5).map(e => e.tagName.toLowerCase() + (e.className ? '.' + e.className : ''));
          return {scrollWidth: root.scrollWidth, clientWidth: width, wide};
        }"""
    )
    return found


def assert_fits(page: Page) -> None:
    found = overflow(page)
    assert found["scrollWidth"] <= found["clientWidth"], found
    assert found["wide"] == [], found


def screenshot(page: Page, folder: Path, name: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    return path
