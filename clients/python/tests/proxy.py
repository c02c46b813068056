"""A tiny HTTP proxy in front of the server that misbehaves on chosen requests, to test
retries: it can drop the connection after forwarding (the server did the work, the client
never hears of it), or answer 503 itself. It records every request body it saw."""

from __future__ import annotations

import http.client
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit

# What to do with the n-th request (0-based): "forward", "drop" (forward, then close the
# connection without answering), "503" (answer 503 with Retry-After, forward nothing) or
# "429" (answer 429 rate_limited with Retry-After, forward nothing).
Plan = Callable[[int], str]


class FlakyProxy:
    def __init__(self, upstream_url: str, plan: Plan, retry_after_seconds: int = 1) -> None:
        self.upstream = urlsplit(upstream_url)
        self.plan = plan
        self.retry_after_seconds = retry_after_seconds
        self.bodies: list[bytes] = []
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self.url = f"http://127.0.0.1:{self._server.server_port}"
        threading.Thread(target=self._server.serve_forever, args=(0.05,), daemon=True).start()

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def _next(self, body: bytes) -> str:
        with self._lock:
            self.bodies.append(body)
            return self.plan(len(self.bodies) - 1)

    def _forward(
        self, method: str, path: str, headers: dict[str, str], body: bytes
    ) -> tuple[int, list, bytes]:
        connection = http.client.HTTPConnection(self.upstream.hostname, self.upstream.port, timeout=60)
        try:
            connection.request(method, path, body=body, headers=headers)
            answer = connection.getresponse()
            return answer.status, answer.getheaders(), answer.read()
        finally:
            connection.close()

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def _any(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                action = proxy._next(body)
                if action == "503":
                    return self._answer(
                        503,
                        [("Retry-After", str(proxy.retry_after_seconds))],
                        b'{"error": {"code": "database_unavailable", "message": "proxy"}}',
                    )
                if action == "429":
                    return self._answer(
                        429,
                        [("Retry-After", str(proxy.retry_after_seconds))],
                        b'{"error": {"code": "rate_limited", "message": "proxy"}}',
                    )
                headers = {k: v for k, v in self.headers.items() if k.lower() not in ("host", "connection")}
                status, answer_headers, answer = proxy._forward(self.command, self.path, headers, body)
                if action == "drop":
                    self.close_connection = True  # the work is done upstream; say nothing
                    return None
                return self._answer(status, answer_headers, answer)

            def _answer(self, status: int, headers: list, body: bytes) -> None:
                self.send_response(status)
                for name, value in headers:
                    if name.lower() not in (
                        "content-length",
                        "transfer-encoding",
                        "connection",
                        "date",
                        "server",
                    ):
                        self.send_header(name, value)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            do_GET = do_POST = do_PUT = _any

            def log_message(self, *_args: object) -> None:
                pass

        return Handler
