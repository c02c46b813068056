"""Stripe's webhook against a real server: payloads shaped as Stripe sends them, signed as
Stripe signs them — and the signatures checked by the `stripe` package itself, so the
scheme holdfast accepts is the one Stripe's own library accepts, not only ours."""

from __future__ import annotations

import hashlib
import hmac
import json
import secrets
import string
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import stripe
from holdfast_server import Server, holdfast_serve

RATE_CARD = Path(__file__).with_name("rate-card.toml")
SECRET = "whsec_" + secrets.token_hex(24)


@pytest.fixture
def stripe_server() -> Iterator[Server]:
    card = string.Template(RATE_CARD.read_text()).substitute(
        webhook_url="http://127.0.0.1:9/unused", webhook_secret="whsec_unused"
    )
    with holdfast_serve(card + f'\n[payments.stripe]\nsecret = "{SECRET}"\n') as running:
        yield running


def sign(payload: str, secret: str = SECRET, at: int | None = None) -> str:
    """The Stripe-Signature header for `payload`, as Stripe makes it."""
    t = int(time.time()) if at is None else at
    mac = hmac.new(secret.encode(), f"{t}.{payload}".encode(), hashlib.sha256).hexdigest()
    return f"t={t},v1={mac}"


def payment_succeeded(payment: str, account: str, cents: int) -> str:
    return json.dumps(
        {
            "id": f"evt_{uuid.uuid4().hex}",
            "object": "event",
            "type": "payment_intent.succeeded",
            "data": {
                "object": {
                    "id": payment,
                    "object": "payment_intent",
                    "amount": cents,
                    "amount_received": cents,
                    "currency": "usd",
                    "status": "succeeded",
                    "metadata": {"account_id": account},
                }
            },
        }
    )


def deliver(server: Server, payload: str, signature: str) -> httpx.Response:
    return httpx.post(
        f"{server.url}/v1/integrations/stripe",
        content=payload,
        headers={"Content-Type": "application/json", "Stripe-Signature": signature},
    )


def balance(server: Server, account: str) -> int:
    r = httpx.get(
        f"{server.url}/v1/accounts/{account}", headers={"Authorization": f"Bearer {server.service_key}"}
    )
    return r.json()["balance_micros"]


def test_what_stripe_verifies_holdfast_credits_once_and_what_it_refuses_holdfast_refuses(
    stripe_server: Server,
) -> None:
    account = f"acct-{uuid.uuid4().hex[:12]}"
    created = httpx.put(
        f"{stripe_server.url}/v1/accounts/{account}",
        json={"plan": "free"},
        headers={"Authorization": f"Bearer {stripe_server.service_key}"},
    )
    assert created.status_code == 201, created.text
    payload = payment_succeeded("pi_python_1", account, 1_250)
    header = sign(payload)

    event = stripe.Webhook.construct_event(payload, header, SECRET)
    assert event["data"]["object"]["id"] == "pi_python_1"
    first = deliver(stripe_server, payload, header)
    assert first.status_code == 200, first.text
    assert first.json()["outcome"] == "credited"
    again = deliver(stripe_server, payload, sign(payload))
    assert again.json()["outcome"] == "already_applied"
    assert balance(stripe_server, account) == 12_500_000

    tampered = payload.replace("1250", "9250")
    old = sign(payload, at=int(time.time()) - 400)
    other = sign(payload, secret="whsec_someone_else")
    for body, bad in [(tampered, header), (payload, old), (payload, other)]:
        with pytest.raises(stripe.SignatureVerificationError):
            stripe.WebhookSignature.verify_header(body, bad, SECRET, tolerance=300)
        refused = deliver(stripe_server, body, bad)
        assert refused.status_code == 400, refused.text
        assert refused.json()["error"]["code"] == "invalid_signature"
    assert balance(stripe_server, account) == 12_500_000
