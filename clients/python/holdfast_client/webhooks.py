"""Verifying a webhook delivery from holdfast (Standard Webhooks, see docs/webhooks.md)."""

from __future__ import annotations

import json
from collections.abc import Mapping

from standardwebhooks import Webhook, WebhookVerificationError

from .generated.models import EventBody

__all__ = ["WebhookVerificationError", "verify_webhook"]


def verify_webhook(body: bytes | str, headers: Mapping[str, str], secret: str) -> EventBody:
    """Checks a delivery's `webhook-signature` against its raw body and returns the event.

    `body` is the request body exactly as received (re-serialised JSON would not match),
    `headers` the request's headers (any case), `secret` the endpoint's `whsec_…` secret
    from the rate card. Raises `WebhookVerificationError` when a header is missing or
    malformed, no signature matches, or `webhook-timestamp` is more than 5 minutes from
    this machine's clock (a replayed old delivery). De-duplicate by `webhook-id`: delivery
    is at least once.
    """
    try:
        Webhook(secret).verify(body, {k: v for k, v in headers.items()}, json_parse=False)
    except ValueError as malformed:  # bad base64, a signature without "v1,", non-UTF-8
        raise WebhookVerificationError(f"malformed delivery: {malformed}") from None
    return EventBody.from_dict(json.loads(body))
