"""The listening socket `skillwire serve` binds itself (to report a port in use before scanning).

Connections accepted on it must have TCP_NODELAY: asyncio sets it only when the socket's `proto` is
IPPROTO_TCP, which accepted sockets inherit from the listening one. Without it every small JSON-RPC
answer waits for the client's delayed ACK (Nagle's algorithm), about 40 ms per request on loopback.
"""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Callable

import pytest

from skillwire.server.app import bind_http_socket, event_loop_options


def _loops() -> list[tuple[str, Callable[[], asyncio.AbstractEventLoop]]]:
    loops: list[tuple[str, Callable[[], asyncio.AbstractEventLoop]]] = [("asyncio", asyncio.new_event_loop)]
    if event_loop_options().get("use_uvloop"):  # the loop `skillwire serve --http` runs on, where installed
        import uvloop

        loops.append(("uvloop", uvloop.new_event_loop))
    return loops


@pytest.mark.parametrize("new_loop", [factory for _, factory in _loops()], ids=[name for name, _ in _loops()])
def test_connections_accepted_on_the_bound_socket_have_tcp_nodelay(
    new_loop: Callable[[], asyncio.AbstractEventLoop],
) -> None:
    sock = bind_http_socket("127.0.0.1", 0)
    assert sock.proto == socket.IPPROTO_TCP
    sock.listen()
    seen: list[int] = []

    async def main() -> None:
        accepted = asyncio.Event()

        class Probe(asyncio.Protocol):
            def connection_made(self, transport: asyncio.BaseTransport) -> None:
                peer: socket.socket = transport.get_extra_info("socket")
                seen.append(peer.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))
                transport.close()
                accepted.set()

        loop = asyncio.get_running_loop()
        server = await loop.create_server(Probe, sock=sock)
        port = sock.getsockname()[1]
        _, writer = await asyncio.open_connection("127.0.0.1", port)
        await asyncio.wait_for(accepted.wait(), 10)
        writer.close()
        server.close()
        await server.wait_closed()

    with asyncio.Runner(loop_factory=new_loop) as runner:
        runner.run(main())
    assert len(seen) == 1
    assert seen[0] != 0
