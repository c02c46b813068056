"""A webhook receiver for tests: records every delivery (raw body and headers), answers 204."""

from __future__ import annotations

import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass(frozen=True)
class Delivery:
    body: bytes
    headers: dict[str, str]


class Receiver:
    """Listens on a free 127.0.0.1 port until `close`; `deliveries` grows as POSTs arrive."""

    def __init__(self) -> None:
        self.deliveries: list[Delivery] = []
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self.url = f"http://127.0.0.1:{self._server.server_port}/hooks"
        threading.Thread(target=self._server.serve_forever, args=(0.05,), daemon=True).start()

    def received(self) -> list[Delivery]:
        with self._lock:
            return list(self.deliveries)

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                with receiver._lock:
                    receiver.deliveries.append(Delivery(body, dict(self.headers.items())))
                self.send_response(204)
                self.end_headers()

            def log_message(self, *_args: object) -> None:
                pass

        return Handler
