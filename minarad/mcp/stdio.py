"""stdin/stdout for the MCP server without a worker thread per line.

The SDK reads stdin and writes stdout through ``anyio.wrap_file``: each
line read, written and flushed is a hop to a worker thread, three per tool
call, which on a busy machine costs more than the call itself. Here stdin
is read by the event loop (``connect_read_pipe``) and each reply is written
with one ``os.write`` loop. As the SDK does, the protocol's descriptors are
moved aside first: fd 0 then reads the null device and fd 1 writes to
stderr, so a stray ``print`` or a child process can never corrupt the wire.

When stdin is not a pipe, socket or terminal (a regular file), :func:`open_stdio`
returns None and the SDK's own transport is used.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import stat
import sys
from collections.abc import Iterator

#: The longest line (one JSON-RPC message) read from stdin.
MAX_LINE = 64 * 1024 * 1024


class PipeLines:
    """Lines of text read from a pipe by the event loop (an async iterator)."""

    def __init__(self, fd: int):
        self.fd = fd
        self.reader: asyncio.StreamReader | None = None

    def __aiter__(self) -> PipeLines:
        return self

    async def __anext__(self) -> str:
        if self.reader is None:
            loop = asyncio.get_running_loop()
            reader = self.reader = asyncio.StreamReader(limit=MAX_LINE)
            pipe = os.fdopen(self.fd, "rb", buffering=0, closefd=False)
            await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), pipe)
        line = await self.reader.readline()
        if not line:
            raise StopAsyncIteration
        return line.decode("utf-8", "replace")


class PipeWriter:
    """Text written whole to a descriptor (the SDK awaits ``write`` then ``flush``)."""

    def __init__(self, fd: int):
        self.fd = fd

    async def write(self, text: str) -> None:
        data = memoryview(text.encode("utf-8"))
        while data:
            try:
                data = data[os.write(self.fd, data):]
            except BlockingIOError:  # a non-blocking pipe that is full: let the reader read
                await asyncio.sleep(0.001)

    async def flush(self) -> None:
        return None


def _streamable(fd: int) -> bool:
    mode = os.fstat(fd).st_mode
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or stat.S_ISCHR(mode)


@contextlib.contextmanager
def claimed_stdio() -> Iterator[tuple[PipeLines, PipeWriter] | None]:
    """Move the protocol's descriptors aside; yield ``(stdin, stdout)`` or None.

    While inside, fd 0 reads the null device and fd 1 writes to stderr; both
    are put back on exit.
    """
    if not _streamable(0):
        yield None
        return
    sys.stdout.flush()
    wire_in, wire_out = os.dup(0), os.dup(1)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.dup2(2, 1)
    os.close(null)
    try:
        yield PipeLines(wire_in), PipeWriter(wire_out)
    finally:
        os.dup2(wire_in, 0)
        os.dup2(wire_out, 1)
        os.close(wire_in)
        os.close(wire_out)
