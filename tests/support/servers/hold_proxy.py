"""A TCP proxy in front of an HTTP server that holds one upload mid-body: a writer killed while it uploads.

Spec: ``spec/checkpoints.md`` §17.3 Atomicity, §19.4 Stores. The crash tests on S3
(``tests/reference_impl/write/test_store_crash.py``) point the writer at this proxy instead of the
S3 gateway. The proxy forwards every byte both ways, and parses only the client's HTTP/1.1 requests
(request line, headers, a ``Content-Length`` or chunked body) to find the ones to hold: every
upload (``PUT``/``POST`` with a body) whose target the test's ``matches`` accepts. Of such a request
it forwards the headers and the first half of the body (at most ``after_bytes``), then forwards
nothing more from that connection; the first one sets :attr:`HoldingProxy.held`. The uploads are
in progress and stay so, deterministically, until the test kills the writer: a client that gives
up on one (a request timeout) and retries is held again, so no matching upload ever completes. When the client's side of a
connection closes (the writer killed), the proxy closes the server's side: the server sees the
upload's connection drop mid-body, as it would without the proxy.

A test may also have the server refuse requests: those the test's ``refuse`` accepts (by method, target
and headers, e.g. only the requests of Spark's S3A client for one file) are forwarded with the
signature of their ``Authorization`` header broken, so the server itself answers them ``403``
(``SignatureDoesNotMatch``), as a store answers credentials it does not accept, while the other
requests of the same command are served (the read tests of ``tests/reference_impl/read/test_store_failures.py``).

Every request line seen is recorded (:attr:`HoldingProxy.requests`, with its headers), so a test can
say, for instance, that no multipart upload was started, and a benchmark can tell which client sent
which request.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import threading
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from tests.support.servers.processes import LOOPBACK

#: How long the proxy waits for its event loop to start or stop.
START_TIMEOUT_S = 30.0
#: The signature of an AWS Signature V4 ``Authorization`` header (hex digits).
_SIGNATURE = re.compile(rb"(Signature=)([0-9a-f]+)")

#: ``refuse(method, target, headers)``: whether the server is to refuse this request (module docs).
Refuse = Callable[[str, str, Mapping[str, str]], bool]


def _refuse_none(method: str, target: str, headers: Mapping[str, str]) -> bool:
    return False


@dataclass
class HoldingProxy:
    """A running proxy: its ``http://`` endpoint, the request lines it saw, and the held uploads."""

    endpoint: str
    requests: list[str] = field(default_factory=list)
    #: The headers of each request in :attr:`requests` (lower-case names), e.g. which client sent it.
    headers: list[dict[str, str]] = field(default_factory=list)
    #: Set when the first upload is held; :attr:`held_requests` are the request lines of the held ones.
    held: threading.Event = field(default_factory=threading.Event)
    held_requests: list[str] = field(default_factory=list)
    #: The request lines of the requests the server was made to refuse.
    refused: list[str] = field(default_factory=list)


async def _pump(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    """Copy bytes from ``reader`` to ``writer`` until end of input, then close ``writer``."""
    with contextlib.suppress(ConnectionError, OSError):
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
    with contextlib.suppress(ConnectionError, OSError):
        writer.close()


async def _body(reader: asyncio.StreamReader, headers: dict[str, str]) -> list[bytes]:
    """The body of a request, as the pieces it came in (chunk framing kept), read from ``reader``."""
    if headers.get("transfer-encoding", "").lower() == "chunked":
        pieces = []
        while True:
            size_line = await reader.readuntil(b"\r\n")
            size = int(size_line.split(b";")[0], 16)
            pieces.append(size_line)
            if size == 0:
                while (line := await reader.readuntil(b"\r\n")) != b"\r\n":  # trailers
                    pieces.append(line)
                return [*pieces, b"\r\n"]
            pieces.append(await reader.readexactly(size + 2))
    length = int(headers.get("content-length", "0"))
    return [await reader.readexactly(length)] if length else []


def _broken_signature(head: bytes) -> bytes:
    """``head`` (a request's line and headers) with every hex digit of its V4 signature changed."""
    return _SIGNATURE.sub(
        lambda m: m[1] + m[2].translate(bytes.maketrans(b"0123456789abcdef", b"123456789abcdef0")), head
    )


def _hold_after(pieces: list[bytes], after_bytes: int) -> bytes:
    """The bytes forwarded of a held body: the first half, at most ``after_bytes``."""
    data = b"".join(pieces)
    return data[: max(1, min(after_bytes, len(data) // 2))]


async def _requests(
    proxy: HoldingProxy,
    client: asyncio.StreamReader,
    server: asyncio.StreamWriter,
    matches: Callable[[str, str], bool],
    after_bytes: int,
    refuse: Refuse,
) -> None:
    """Forward the client's requests one by one; hold a matching upload, break the signature of one to refuse."""
    try:
        while head := await client.readuntil(b"\r\n\r\n"):
            lines = head.decode("latin-1").split("\r\n")
            method, target = lines[0].split(" ")[:2]
            headers = {k.strip().lower(): v.strip() for k, _, v in (x.partition(":") for x in lines[1:] if x)}
            proxy.requests.append(f"{method} {target}")
            proxy.headers.append(headers)
            if refuse(method, target, headers):
                proxy.refused.append(f"{method} {target}")
                head = _broken_signature(head)
            server.write(head)
            await server.drain()
            pieces = await _body(client, headers)
            if pieces and method in ("PUT", "POST") and matches(method, target):
                server.write(_hold_after(pieces, after_bytes))
                await server.drain()
                proxy.held_requests.append(f"{method} {target}")
                proxy.held.set()
                while await client.read(65536):  # forward nothing more, until the writer is gone
                    pass
                break
            for piece in pieces:
                server.write(piece)
            await server.drain()
    except (asyncio.IncompleteReadError, ConnectionError, OSError):
        pass
    with contextlib.suppress(ConnectionError, OSError):
        server.close()


@contextlib.contextmanager
def holding_proxy(
    upstream: str,
    matches: Callable[[str, str], bool],
    *,
    after_bytes: int = 4096,
    refuse: Refuse = _refuse_none,
) -> Iterator[HoldingProxy]:
    """Run a proxy to the ``http://host:port`` ``upstream`` on a loopback port; hold the uploads ``matches``,
    have the server refuse the requests ``refuse`` accepts.

    ``matches(method, target)`` gets a request's method and target (path and query); ``refuse`` also its
    headers (lower-case names).
    """
    url = urlsplit(upstream)
    host, port = url.hostname or LOOPBACK, url.port or 80
    loop = asyncio.new_event_loop()
    box: list[HoldingProxy] = []
    writers: list[asyncio.StreamWriter] = []

    async def connection(client: asyncio.StreamReader, to_client: asyncio.StreamWriter) -> None:
        writers.append(to_client)
        with contextlib.suppress(asyncio.CancelledError, ConnectionError, OSError):
            from_server, server = await asyncio.open_connection(host, port)
            writers.append(server)
            await asyncio.gather(
                _requests(box[0], client, server, matches, after_bytes, refuse), _pump(from_server, to_client)
            )

    async def serve() -> asyncio.Server:
        listener = await asyncio.start_server(connection, LOOPBACK, 0)
        box.append(HoldingProxy(f"http://{LOOPBACK}:{listener.sockets[0].getsockname()[1]}"))
        return listener

    thread = threading.Thread(target=loop.run_forever, name="holding-proxy", daemon=True)
    thread.start()
    listener = asyncio.run_coroutine_threadsafe(serve(), loop).result(START_TIMEOUT_S)
    try:
        yield box[0]
    finally:

        async def stop() -> None:
            listener.close()
            for writer in writers:  # every connection ends: its tasks see the end of input
                writer.close()
            tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
            if tasks:  # none when every connection had ended already (asyncio.wait refuses an empty set)
                await asyncio.wait(tasks, timeout=START_TIMEOUT_S)
            for writer in writers:
                with contextlib.suppress(ConnectionError, OSError):
                    await writer.wait_closed()

        asyncio.run_coroutine_threadsafe(stop(), loop).result(START_TIMEOUT_S)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(START_TIMEOUT_S)
        loop.close()
