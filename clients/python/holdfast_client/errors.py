"""The one exception the client raises for an answer of the API that is not a success."""

from __future__ import annotations

import json


class HoldfastError(Exception):
    """A refusal or failure answered by holdfast: the HTTP status and the API's stable
    `error.code` (API.md "Errors"), with its human `message`.

    Branch on `code`, never on `message`: the code is part of the contract, the message
    may change. A refused request changed nothing on the server.
    """

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(f"{status} {code}: {message}")
        self.status = status
        self.code = code
        self.message = message

    @classmethod
    def from_answer(cls, status: int, content: bytes) -> HoldfastError:
        """Reads `{"error": {"code", "message"}}`; anything else (a proxy's HTML page) gets
        the code `http_<status>` and the start of the body as its message."""
        try:
            error = json.loads(content)["error"]
            return cls(status, str(error["code"]), str(error["message"]))
        except (ValueError, KeyError, TypeError):
            text = content[:200].decode("utf-8", "replace")
            return cls(status, f"http_{status}", text)
