"""A mock model served on loopback to the official SDK: shared by the server's tests."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import anthropic

from tests.helpers.model_support import TOOLS
from toolturn.model.config import ModelConfig
from toolturn.model.model import MockModel
from toolturn.wire.background import serve_in_thread
from toolturn.wire.server import MockServer

SEED = 7
FAST = 100.0  # --speed for tests: a 500 ms first token takes 5 ms
USER = [{"role": "user", "content": "Read the file."}]
THINK_TEXT_CALL = {
    "kind": "explicit",
    "responses": [{"blocks": [
        {"type": "thinking", "thinking": "The user wants a file read.",
         "signature": "c2lnbmF0dXJl"},
        {"type": "text", "text": "Reading it now, then I will summarise ünïcödé text."},
        {"type": "tool_use", "name": "Read", "input": {"file_path": "/repo/a.py"}},
    ]}],
}


def mock_model(**config: Any) -> MockModel:
    config.setdefault("profile", "haiku")
    config.setdefault("script", THINK_TEXT_CALL)
    return MockModel(ModelConfig.model_validate(config), SEED, TOOLS)


class LogLines:
    """The server's log, kept for assertions (the server writes from its own thread)."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self._lock = threading.Lock()

    def __call__(self, line: str) -> None:
        with self._lock:
            self.lines.append(line)


@contextmanager
def serving(
    model: MockModel, speed: float = FAST, **options: Any
) -> Iterator[tuple[MockServer, anthropic.Anthropic, LogLines]]:
    log = LogLines()
    with serve_in_thread(model, speed=speed, log=log, **options) as server:
        client = anthropic.Anthropic(base_url=server.base_url, api_key="x", max_retries=0,
                                     timeout=20)
        try:
            yield server, client, log
        finally:
            client.close()


def request(model: MockModel, **extra: Any) -> dict[str, Any]:
    return {"model": model.name, "max_tokens": 4096, "messages": USER, **extra}
