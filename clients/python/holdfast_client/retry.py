"""How long to wait before the next attempt of a call."""

from __future__ import annotations

import random
from dataclasses import dataclass


@dataclass(frozen=True)
class RetryPolicy:
    """Bounded retries with exponential back-off and full jitter.

    The n-th wait is a random time in [0, min(max_delay, base_delay * 2**(n-1))]: the
    jitter spreads out many clients that lost the server at the same moment, so they do
    not all come back together. A `Retry-After` (seconds) from the server is honoured
    instead, up to `max_delay_seconds`.
    """

    max_attempts: int = 5
    base_delay_seconds: float = 0.2
    max_delay_seconds: float = 10.0

    def __post_init__(self) -> None:
        if self.max_attempts < 1:
            raise ValueError(f"max_attempts must be at least 1, not {self.max_attempts}")

    def delay_seconds(self, attempt: int, retry_after: str | None = None) -> float:
        """The wait after failed attempt number `attempt` (1-based)."""
        if retry_after is not None and retry_after.strip().isdigit():
            return min(float(retry_after), self.max_delay_seconds)
        ceiling = min(self.max_delay_seconds, self.base_delay_seconds * 2 ** (attempt - 1))
        return random.uniform(0, ceiling)
