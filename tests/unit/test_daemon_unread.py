"""A warm daemon's client that stops reading is dropped once too much waits for it, not
buffered for as long as the daemon lives; one that reads keeps everything."""

from __future__ import annotations

import asyncio
import socket

from tether.daemon.server import SocketWriter


async def _pair() -> tuple[asyncio.StreamWriter, socket.socket]:
    ours, theirs = socket.socketpair()
    _reader, writer = await asyncio.open_connection(sock=ours)
    return writer, theirs


async def test_a_client_that_never_reads_is_dropped_past_the_limit() -> None:
    writer, theirs = await _pair()
    out = SocketWriter(writer, unread_limit=1 << 20)
    chunk = b"x" * 65536
    for _ in range(64):  # 4 MiB: more than the socket's buffers and the limit
        out.write(chunk)
    assert writer.transport.is_closing()
    await asyncio.wait_for(writer.wait_closed(), 5)
    theirs.close()


async def test_a_client_that_reads_gets_everything() -> None:
    writer, theirs = await _pair()
    out = SocketWriter(writer, unread_limit=1 << 20)
    theirs.setblocking(False)
    loop = asyncio.get_running_loop()
    got = bytearray()
    for _ in range(64):
        out.write(b"y" * 65536)
        while writer.transport.get_write_buffer_size() > 0 or len(got) % 65536:
            got += await loop.sock_recv(theirs, 1 << 20)
            await asyncio.sleep(0)
    assert len(got) == 64 * 65536 and not writer.transport.is_closing()
    writer.close()
    theirs.close()
