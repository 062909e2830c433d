"""FastMCP 4.2's skills server over Streamable HTTP, as the benchmark's peer.

    python -m bench.fastmcp_server ROOT --port N [--reload] [--page-size 100]     (N = 0: the kernel picks)

Serves ROOT with `fastmcp.skills.provider.SkillsDirectoryProvider` (the provider that implements the
skills extension) on 127.0.0.1. `--reload` re-reads the folders on every request: FastMCP's only way
to pick up an edit (it has no watcher). Prints "listening on <url>", with the port bound, once the catalog
is loaded and the port is bound (it accepts connections a moment later).
"""

from __future__ import annotations

import argparse
import logging
import socket
import sys
from pathlib import Path

from fastmcp import FastMCP
from fastmcp.skills.provider import SkillsDirectoryProvider


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("root", type=Path)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--reload", action="store_true", help="re-read the folders on every request")
    parser.add_argument("--page-size", type=int, default=100, help="skills/list page size (default 100)")
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    provider = SkillsDirectoryProvider(args.root, reload=args.reload)
    server = FastMCP("fastmcp-skills-bench", providers=[provider], list_page_size=args.page_size)
    # Bound here, so --port 0 (the kernel picks) prints the port bound (bench.peers reads it).
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", args.port))
    port = sock.getsockname()[1]
    print(f"fastmcp: listening on http://127.0.0.1:{port}/mcp", file=sys.stderr, flush=True)
    server.run(transport="http", host="127.0.0.1", port=port, show_banner=False, log_level="warning", sockets=[sock])


if __name__ == "__main__":
    main()
