"""A server address written without a scheme (`127.0.0.1:8765/mcp`): the URL it most likely means.

The one rule, for every place that takes a server URL and names what to write instead: the client commands'
SERVER argument (`cli/args.py`) and the bridge's `--server LABEL=URL` (`bridge/config.py`), which sits below
`cli/` and so could not use the command line's own copy.
"""

from __future__ import annotations

import re

# HOST[:PORT][/PATH] written without a scheme: an IPv4 address, a bracketed IPv6 one, or a host name.
_ADDRESS = re.compile(
    r"(?P<host>\d{1,3}(?:\.\d{1,3}){3}|\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?"
    r"(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)*)(?P<port>:\d{1,5})?(?P<path>/\S*)?"
)
_LOOPBACK = re.compile(r"localhost|127(?:\.\d{1,3}){3}|\[::1\]", re.IGNORECASE)


def address_as_url(text: str) -> str | None:
    """The URL a server address written without a scheme most likely means (`127.0.0.1:8765/mcp` ->
    `http://127.0.0.1:8765/mcp`), or None when `text` does not look like one: it must name a port, or be an
    IP address, localhost, or a dotted host name with a path, so a command (`python`, `server.py`,
    `scripts/serve`) is never taken for a host.
    Loopback gets http:// (a local server rarely has TLS); any other host https://."""
    match = _ADDRESS.fullmatch(text)
    if match is None:
        return None
    host = match["host"]
    is_ip = host.startswith("[") or re.fullmatch(r"[\d.]+", host) is not None
    named = is_ip or host.lower() == "localhost" or "." in host
    # A port makes any host an address; a path only a dotted name (`scripts/serve` is a command, not a host).
    if not (match["port"] or (named and (match["path"] or is_ip or host.lower() == "localhost"))):
        return None
    scheme = "http" if _LOOPBACK.fullmatch(host) else "https"
    return f"{scheme}://{text}"
