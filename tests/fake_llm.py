"""A local fake of the Anthropic Messages and OpenAI chat-completions HTTP APIs.

Tests point the real SDKs (through instructor) at `FakeLLM.url` and script what each request
gets back: recorded bodies from `tests/recordings/` (`recording("anthropic/messages_tool_use_ok")`),
HTTP errors, slow replies, or a function of the request. Every request is kept (path, headers,
parsed body) so a test can count calls and read what was sent. Nothing is monkeypatched: the
swap happens at the HTTP boundary, as a real gateway or proxy would.

    with FakeLLM() as fake:
        fake.script(recording("anthropic/error_429_rate_limit"), recording("anthropic/messages_tool_use_ok"))
        ...  # anthropic.AsyncAnthropic(base_url=fake.url, ...) / openai.AsyncOpenAI(base_url=fake.url + "/v1")
        assert fake.count("/v1/messages") == 2
"""

from __future__ import annotations

import json
import re
import threading
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

RECORDINGS = Path(__file__).parent / "recordings"


@dataclass
class Reply:
    status: int = 200
    body: Any = None  # a dict/list is sent as JSON, str/bytes as they are
    headers: dict[str, str] = field(default_factory=dict)
    delay_s: float = 0.0  # wait this long before answering (to outlast a client timeout)

    def payload(self) -> bytes:
        if isinstance(self.body, bytes):
            return self.body
        if isinstance(self.body, str):
            return self.body.encode()
        return json.dumps(self.body).encode()


@dataclass
class SeenRequest:
    method: str
    path: str
    headers: dict[str, str]
    raw: bytes

    @property
    def body(self) -> Any:
        try:
            return json.loads(self.raw or b"null")
        except ValueError:
            return None

    def text(self) -> str:
        """All prompt text of the request (system, messages, tool results) as one string."""
        return self.raw.decode("utf-8", "replace")


Responder = Callable[[SeenRequest], Reply]


def recording(name: str, **changes: Any) -> Reply:
    """A recorded reply: `{"status", "headers", "body"}` in tests/recordings/<name>.json."""
    data = json.loads((RECORDINGS / f"{name}.json").read_text())
    reply = Reply(status=data.get("status", 200), body=data["body"], headers=dict(data.get("headers", {})))
    for key, value in changes.items():
        setattr(reply, key, value)
    return reply


def estimate_tokens(text: str) -> int:
    return -(-len(text) // 4)


def _turn_ids(request: SeenRequest) -> list[str]:
    return re.findall(r'<turn id=\\"([^"\\]+)\\"', request.text())


def anthropic_echo(request: SeenRequest) -> Reply:
    """A valid Anthropic tool_use answer (extraction, or the session call's extraction and summary)
    naming the chunk's first turn, with usage estimated
    from the request size (4 characters per token): for measuring what extraction sends."""
    ids = _turn_ids(request) or ["t0"]
    answer = {"decisions": [{"text": f"Reviewed {len(ids)} turns.", "evidence_turn_ids": [ids[0]]}],
              "summary": {"text": f"A conversation of {len(ids)} turns."}}  # what the session call also asks
    return Reply(
        body={
            "id": f"msg_fake{len(ids):04d}",
            "type": "message",
            "role": "assistant",
            "model": (request.body or {}).get("model", "claude"),
            "content": [{"type": "tool_use", "id": "toolu_fake", "name": "ExtractionResult", "input": answer}],
            "stop_reason": "tool_use",
            "stop_sequence": None,
            "usage": {
                "input_tokens": estimate_tokens(request.text()),
                "output_tokens": estimate_tokens(json.dumps(answer)),
            },
        }
    )


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def do_POST(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        request = SeenRequest("POST", self.path, {k.lower(): v for k, v in self.headers.items()}, self.rfile.read(length))
        fake = self.server.fake
        reply = fake._next(request)
        if reply.delay_s and fake._closing.wait(reply.delay_s):
            return
        payload = reply.payload()
        try:
            self.send_response(reply.status)
            headers = {"content-type": "application/json", **{k.lower(): v for k, v in reply.headers.items()}}
            for key, value in headers.items():
                self.send_header(key, value)
            self.send_header("content-length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (timeout): exactly what a slow reply is for

    do_GET = do_POST  # noqa: N815 - http.server's method name

    def log_message(self, format: str, *args: Any) -> None:  # keep test output quiet
        pass


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    fake: FakeLLM


class FakeLLM:
    """A scripted LLM endpoint on 127.0.0.1 (a free port), served from a background thread."""

    def __init__(self, fallback: Reply | Responder | None = None) -> None:
        self.requests: list[SeenRequest] = []
        self.fallback = fallback
        self._script: deque[Reply | Responder] = deque()
        self._lock = threading.Lock()
        self._closing = threading.Event()
        self._server = _Server(("127.0.0.1", 0), _Handler)
        self._server.fake = self
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.05,), name="fake-llm", daemon=True)
        self._thread.start()

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def script(self, *replies: Reply | Responder) -> FakeLLM:
        """Queue replies for the next requests, in order; then `fallback` (or a 400 error)."""
        with self._lock:
            self._script.extend(replies)
        return self

    def count(self, path: str | None = None) -> int:
        return sum(1 for r in self.requests if path is None or r.path == path)

    def remaining(self) -> int:
        return len(self._script)

    def _next(self, request: SeenRequest) -> Reply:
        with self._lock:
            self.requests.append(request)
            item = self._script.popleft() if self._script else self.fallback
        if item is None:
            # a 400 is not retried, so an unscripted request fails the test at once
            body = {"type": "error", "error": {"type": "fake_llm_unscripted", "message": f"no reply for {request.path}"}}
            return Reply(400, body)
        return item(request) if callable(item) else item

    def close(self) -> None:
        self._closing.set()
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> FakeLLM:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


@pytest.fixture
def fake_llm() -> Iterator[FakeLLM]:
    with FakeLLM() as fake:
        yield fake
