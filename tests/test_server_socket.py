"""The listening socket `skillwire serve` binds itself (to report a port in use before scanning).

Connections accepted on it must have TCP_NODELAY: asyncio sets it only when the socket's `proto` is
IPPROTO_TCP, which accepted sockets inherit from the listening one. Without it every small JSON-RPC
answer waits for the client's delayed ACK (Nagle's algorithm), about 40 ms per request on loopback.
"""

from __future__ import annotations

import asyncio
import socket

from skillwire.server.app import bind_http_socket


def test_connections_accepted_on_the_bound_socket_have_tcp_nodelay() -> None:
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

    asyncio.run(main())
    assert len(seen) == 1
    assert seen[0] != 0
