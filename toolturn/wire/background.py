"""The mock server on a thread of its own, for synchronous clients (the SDK's `Anthropic`,
curl in a subprocess, a test suite that is not async):

    with serve_in_thread(model, speed=20.0) as server:
        client = anthropic.Anthropic(base_url=server.base_url, api_key="x", max_retries=0)
        ...

The server listens before the `with` body starts (on a free port unless one is given) and is
closed, every connection dropped and the thread joined when it ends.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from toolturn.model.model import MockModel
from toolturn.wire.server import DEFAULT_HOST, MockServer, log_to_stderr

# Closing cuts open responses at once, so it takes milliseconds; this only bounds a hang.
_CLOSE_TIMEOUT_S = 10.0


@contextmanager
def serve_in_thread(
    model: MockModel,
    *,
    speed: float = 1.0,
    host: str = DEFAULT_HOST,
    port: int = 0,
    log: Callable[[str], None] = log_to_stderr,
    **options: Any,
) -> Iterator[MockServer]:
    """Run a `MockServer` for `model` on a background event loop while the block runs;
    `options` are the server's other keyword arguments (timeouts, strict_models, ...)."""
    server = MockServer(model, speed=speed, log=log, **options)
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, name="sim-serve", daemon=True)
    thread.start()
    try:
        asyncio.run_coroutine_threadsafe(server.start(host, port), loop).result()
        try:
            yield server
        finally:
            closing = asyncio.run_coroutine_threadsafe(server.close(), loop)
            closing.result(timeout=_CLOSE_TIMEOUT_S)
    finally:
        loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout=_CLOSE_TIMEOUT_S)
        loop.close()
