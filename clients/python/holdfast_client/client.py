"""`Holdfast.call`: one generated operation, run as one logical call.

The generated code (holdfast_client.generated) knows every path, field and answer of the
API. What it cannot know, and this module adds:
- an idempotency key made once per logical call and kept across its retries, so that a
  retry after a lost answer is a replay on the server, never a second charge;
- retries, with back-off, of the answers and failures that a retry can cure: 503
  `database_unavailable` and 429 `rate_limited` (neither was processed; their
  `Retry-After` is honoured), a lost connection, a timeout. Any other 4xx is never
  retried: the same request would be refused the same way;
- a refusal raised as a `HoldfastError` instead of returned beside the result.
"""

from __future__ import annotations

import inspect
import time
import typing
import uuid
from types import ModuleType
from typing import Any

import attrs
import httpx

from .errors import HoldfastError
from .generated import AuthenticatedClient
from .generated.types import UNSET, Response
from .retry import RetryPolicy

DEFAULT_RETRY = RetryPolicy()
# Longer than the longest answer the server gives: 45 s for a lease that waits 30 s.
DEFAULT_TIMEOUT_SECONDS = 50.0

# What a lost connection or a timeout looks like in httpx: worth another attempt. Other
# transport errors (a malformed URL, a local protocol error) would fail the same way again.
RETRYABLE_TRANSPORT_ERRORS = (httpx.TimeoutException, httpx.NetworkError, httpx.RemoteProtocolError)
# Answers that say the request was not processed and may be sent again after a pause.
RETRIED_STATUSES = frozenset({429, 503})


class Holdfast:
    """A connection to one holdfast server with one API key.

    `api` is the generated client, for calling generated functions directly; `call` adds
    the idempotency key, the retries and the exceptions. Safe to share between threads.
    """

    def __init__(
        self,
        base_url: str,
        key: str,
        *,
        retry: RetryPolicy = DEFAULT_RETRY,
        timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS,
    ) -> None:
        self.api = AuthenticatedClient(base_url=base_url, token=key, timeout=httpx.Timeout(timeout_seconds))
        self.api.get_httpx_client()  # made now, so that threads share one connection pool
        self.retry = retry

    def call(self, operation: ModuleType, /, *, body: Any = None, **arguments: Any) -> Any:
        """Runs a generated operation (e.g. `api.jobs.submit`) and returns its parsed answer
        (None for a 204). Raises `HoldfastError` for a refusal, and the last httpx error
        when the connection failed on every attempt.

        `arguments` are the operation's own (path and query parameters, such as
        `account_id` or `limit`); the rest are the fields of its JSON body, unless a
        generated model is given as `body`. A body with an `idempotency_key` that was not
        given gets a fresh uuid4, once: every retry of this call sends the same key.
        """
        own, fields = _split_arguments(operation, arguments)
        models = _body_models(operation)
        if models:
            own["body"] = _with_idempotency_key(_body(models, body, fields))
        elif body is not None or fields:
            raise TypeError(f"{operation.__name__} takes no body, got {sorted(fields)}")
        return self._send(operation, own).parsed

    def _send(self, operation: ModuleType, arguments: dict[str, Any]) -> Response[Any]:
        """Sends the same request until it is answered with anything but a 503 or a 429, or the
        attempts run out; a 4xx or 5xx answer is then raised as a HoldfastError."""
        for attempt in range(1, self.retry.max_attempts + 1):
            last = attempt == self.retry.max_attempts
            try:
                response = operation.sync_detailed(client=self.api, **arguments)
            except RETRYABLE_TRANSPORT_ERRORS:
                if last:
                    raise
                time.sleep(self.retry.delay_seconds(attempt))
                continue
            if response.status_code in RETRIED_STATUSES and not last:
                time.sleep(self.retry.delay_seconds(attempt, response.headers.get("retry-after")))
                continue
            if response.status_code >= 400:
                raise HoldfastError.from_answer(response.status_code, response.content)
            return response
        raise AssertionError("unreachable: the last attempt returns or raises")


def _split_arguments(
    operation: ModuleType, arguments: dict[str, Any]
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Parts the keyword arguments into the operation's own parameters and body fields."""
    own_names = set(inspect.signature(operation.sync_detailed).parameters) - {"client", "body"}
    own = {name: value for name, value in arguments.items() if name in own_names}
    fields = {name: value for name, value in arguments.items() if name not in own_names}
    return own, fields


def _body_models(operation: ModuleType) -> tuple[type, ...]:
    """The generated models of the operation's JSON body (several when it is one of
    several shapes, as a debit of an amount or of metered usage), none when it takes none."""
    hint = typing.get_type_hints(operation.sync_detailed).get("body")
    if hint is None:
        return ()
    candidates = typing.get_args(hint) or (hint,)
    return tuple(c for c in candidates if attrs.has(c))


def _body(models: tuple[type, ...], body: Any, fields: dict[str, Any]) -> Any:
    """The body to send: the given model, or the first of `models` that its JSON fields
    make whole (values may be plain JSON or generated models). A missing or unknown field
    is a TypeError here, before anything is sent, never silently dropped."""
    if body is not None:
        if fields:
            raise TypeError(f"give either body= or its fields, not both: {sorted(fields)}")
        return body
    plain = {name: _plain(value) for name, value in fields.items()}
    refusals = []
    for model in models:
        keyed = {"idempotency_key": None, **plain} if "idempotency_key" in attrs.fields_dict(model) else plain
        try:
            built = model.from_dict(keyed)
        except KeyError as missing:
            refusals.append(f"{model.__name__} needs the field {missing}")
            continue
        unknown = set(keyed) - set(built.to_dict())
        if unknown:
            refusals.append(f"{model.__name__} has no field {sorted(unknown)}")
            continue
        return built
    raise TypeError("; ".join(refusals))


def _plain(value: Any) -> Any:
    """A generated model (or a list of them) as the JSON it stands for."""
    if isinstance(value, list):
        return [_plain(item) for item in value]
    return value.to_dict() if attrs.has(type(value)) else value


def _with_idempotency_key(body: Any) -> Any:
    """The body with a fresh uuid4 `idempotency_key` if it has that field and none is set.
    (An empty key given on purpose is sent as it is: the server refuses it.)"""
    if not attrs.has(type(body)) or "idempotency_key" not in attrs.fields_dict(type(body)):
        return body
    if body.idempotency_key is None or body.idempotency_key is UNSET:
        return attrs.evolve(body, idempotency_key=str(uuid.uuid4()))
    return body
