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
import json
import os
import stat
import sys
from collections.abc import Iterator

#: The longest line (one JSON-RPC message) read from stdin.
MAX_LINE = 64 * 1024 * 1024


class PipeLines:
    """JSON-RPC lines read from a pipe by the event loop (an async iterator).

    A line that is not a message is answered here with the JSON-RPC error
    a client can act on, and the server goes on reading: ``-32700`` for a
    line that is not JSON, not UTF-8 (never replaced with U+FFFD and
    written) or longer than :data:`MAX_LINE`; ``-32602`` for text holding a
    lone surrogate (``"x\\ud800y"``), which no file can hold as UTF-8.

    Args:
        fd: the descriptor to read.
        errors: where error replies go (the protocol's writer).
    """

    def __init__(self, fd: int, errors: PipeWriter | None = None):
        self.fd = fd
        self.errors = errors
        self.reader: asyncio.StreamReader | None = None

    def __aiter__(self) -> PipeLines:
        return self

    async def __anext__(self) -> str:
        while True:
            line = await self._read_line()
            if line is None:
                raise StopAsyncIteration
            if not line.strip():
                continue
            refusal = refuse_line(line)
            if refusal is None:
                return line.decode("utf-8")
            if self.errors is not None:
                await self.errors.write(json.dumps(refusal) + "\n")

    async def _read_line(self) -> bytes | None:
        """The next line (a too-long one as a marker), or None at the end."""
        if self.reader is None:
            loop = asyncio.get_running_loop()
            reader = self.reader = asyncio.StreamReader(limit=MAX_LINE)
            pipe = os.fdopen(self.fd, "rb", buffering=0, closefd=False)
            await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), pipe)
        try:
            return await self.reader.readuntil(b"\n")
        except asyncio.IncompleteReadError as exc:  # the end: a last line without newline
            return exc.partial or None
        except asyncio.LimitOverrunError:  # over the limit: drop that line, answer once
            await self._skip_to_line_end()
            return _TOO_LONG

    async def _skip_to_line_end(self) -> None:
        assert self.reader is not None
        while True:
            try:
                await self.reader.readuntil(b"\n")
                return
            except asyncio.LimitOverrunError as exc:
                await self.reader.readexactly(exc.consumed)
            except asyncio.IncompleteReadError:
                return


#: Stands for a line over :data:`MAX_LINE` (never a real line: real ones end in a newline
#: or the stream).
_TOO_LONG = b"\0too long"


def refuse_line(line: bytes) -> dict | None:
    """The JSON-RPC error answering ``line``, or None when it is a message to serve."""
    if line is _TOO_LONG:
        return _error(None, -32700, f"Parse error: a message longer than {MAX_LINE:,} bytes "
                                    f"was dropped")
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError as exc:
        return _error(None, -32700, f"Parse error: the message is not valid UTF-8 (byte "
                                    f"{exc.start}); minara never stores replaced text")
    try:
        message = json.loads(text)
    except ValueError as exc:
        return _error(None, -32700, f"Parse error: not JSON ({exc})")
    except RecursionError:
        return _error(None, -32700, "Parse error: the JSON is nested too deeply")
    if "\\u" in text and _holds_lone_surrogate(message):
        request_id = message.get("id") if isinstance(message, dict) else None
        return _error(request_id, -32602, "Invalid params: the text holds a lone surrogate "
                                          "(e.g. \\ud800), which is not Unicode text")
    return None


def _holds_lone_surrogate(value: object) -> bool:
    try:
        json.dumps(value, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def _error(request_id: object, code: int, message: str) -> dict:
    return {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}


class PipeWriter:
    """Text written whole to a descriptor (the SDK awaits ``write`` then ``flush``)."""

    def __init__(self, fd: int):
        self.fd = fd
        self._lock = asyncio.Lock()  # replies and error replies never interleave

    async def write(self, text: str) -> None:
        data = memoryview(text.encode("utf-8", "backslashreplace"))
        async with self._lock:
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
        writer = PipeWriter(wire_out)
        yield PipeLines(wire_in, writer), writer
    finally:
        os.dup2(wire_in, 0)
        os.dup2(wire_out, 1)
        os.close(wire_in)
        os.close(wire_out)
