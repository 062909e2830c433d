"""The catalog page in tests: `skillwire browse` as a real subprocess, plain HTTP requests to a page, and the
hostile corpus every page test renders (tests/e2e/test_page_http.py, tests/e2e/test_page_browser.py)."""

from __future__ import annotations

import http.client
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from support.skills import write_file

BROWSING = re.compile(r"browsing \S+ at (http://127\.0\.0\.1:\d+)/")
ARTIFACTS = Path(__file__).resolve().parents[1] / "artifacts" / "page"  # git-ignored: screenshots


def page_base(mcp_url: str) -> str:
    """The page's address for a server's `/mcp` URL (the page is at `/` of the same server)."""
    return mcp_url.removesuffix("/mcp")


@dataclass
class Answer:
    status: int
    headers: dict[str, str]  # lower-case names; a repeated header's values joined with ", "
    body: bytes

    @property
    def text(self) -> str:
        return self.body.decode("utf-8")


def fetch(
    url: str, *, method: str = "GET", headers: Mapping[str, str] | None = None, body: bytes | None = None
) -> Answer:
    """One HTTP request as a browser would send it, redirects not followed."""
    parts = urlsplit(url)
    connection = http.client.HTTPConnection(parts.hostname or "127.0.0.1", parts.port, timeout=30)
    try:
        path = parts.path or "/"
        connection.request(
            method, path + (f"?{parts.query}" if parts.query else ""), body=body, headers=dict(headers or {})
        )
        response = connection.getresponse()
        found: dict[str, str] = {}
        for name, value in response.getheaders():
            key = name.lower()
            found[key] = f"{found[key]}, {value}" if key in found else value
        return Answer(response.status, found, response.read())
    finally:
        connection.close()


@contextmanager
def browse(url: str, *, env: Mapping[str, str] | None = None, timeout: float = 60.0) -> Iterator[str]:
    """Run `skillwire browse URL --port 0`; yields the page's base URL once it listens."""
    log_fd, log_name = tempfile.mkstemp(prefix="skillwire-browse-", suffix=".log")
    os.close(log_fd)
    log_path = Path(log_name)
    with open(log_path, "wb") as log:
        process = subprocess.Popen(
            [sys.executable, "-m", "skillwire.cli.main", "browse", "--port", "0", url],
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            env=None if env is None else {**os.environ, **env},
        )
    try:
        deadline = time.monotonic() + timeout
        while True:
            text = log_path.read_text(errors="replace")
            found = BROWSING.search(text)
            if found is not None:
                break
            if process.poll() is not None:
                raise RuntimeError(f"skillwire browse exited with {process.returncode}:\n{text}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"skillwire browse did not start within {timeout}s:\n{text}")
            time.sleep(0.05)
        yield found.group(1)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGTERM)
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()
        log_path.unlink(missing_ok=True)


# -- the hostile corpus ---------------------------------------------------------------------------------

RTL = "\u202e"
HOSTILE_BODY = """# Title <script>alert('heading')</script>

<script>alert('block')</script>

<img src=x onerror="alert('img')">
<svg onload="alert('svg-inline')"></svg>
<iframe src="https://example.invalid/frame"></iframe>
<a href="javascript:alert('raw-a')">raw anchor</a>

[js link](javascript:alert('js')) [JS upper](JAVASCRIPT:alert('js2'))
[data link](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)
[vb](vbscript:msgbox) [file](file:///etc/passwd) [escape](../../../etc/passwd) [proto](//example.invalid/x)
[entity](jav&#x61;script:alert('entity')) [spaced](<java script:alert(1)>)

![remote image](https://example.invalid/pixel.png) ![own svg](pic.svg)
![data image](data:image/svg+xml,<svg onload=alert(1)>)

[the page](index.html) [an outside site](https://example.invalid/page)

```html
<script>alert('fenced')</script>
```
"""

EVIL_SVG = (
    '<svg xmlns="http://www.w3.org/2000/svg" onload="alert(\'svg-onload\')">'
    "<script>alert('svg-script')</script></svg>\n"
)
INDEX_HTML = "<!doctype html><script>alert('index.html')</script><img src=x onerror=\"alert('index-img')\">\n"


def write_hostile_corpus(root: Path) -> Path:
    """Skills built to make a page run something: every way a name, a body or a file could try."""
    description = f"<script>alert('desc')</script> \" onmouseover=\"alert('attr') {RTL}gnp.exe bell\x07 end"
    write_file(
        root / "evil" / "SKILL.md",
        f"---\nname: evil\ndescription: {json.dumps(description)}\nx-note: \"<img src=x onerror=alert('fm')>\"\n---\n"
        + HOSTILE_BODY,
    )
    write_file(root / "evil" / "index.html", INDEX_HTML)
    write_file(root / "evil" / "pic.svg", EVIL_SVG)
    write_file(root / "evil" / f"read{RTL}me.md", "a name with a right-to-left override\n")
    write_file(root / "evil" / "deep" / "er" / "<b>bold<i>.md", "a name that looks like markup\n")
    write_file(
        root / "plain" / "SKILL.md",
        "---\nname: plain\ndescription: An ordinary skill next to the hostile one.\n---\n# Plain\n\nNothing here.\n",
    )
    return root
