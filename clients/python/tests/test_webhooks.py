"""Webhook deliveries from the real server verify with verify_webhook; tampered ones do not."""

from __future__ import annotations

import base64
import secrets
import time
from datetime import UTC, datetime

import pytest
from holdfast_server import wait_for
from receiver import Delivery, Receiver
from standardwebhooks import Webhook

from holdfast_client import Holdfast, WebhookVerificationError, api, verify_webhook


def waiting_notice(receiver: Receiver, job_id: str) -> Delivery:
    """The delivery of the job's `job.waiting` event (fired one second after submit)."""

    def find() -> Delivery | None:
        return next(
            (d for d in receiver.received() if job_id.encode() in d.body and b"job.waiting" in d.body), None
        )

    return wait_for("the job.waiting delivery", find, timeout_seconds=15)


def test_a_real_delivery_verifies_and_a_tampered_one_does_not(
    service: Holdfast, funded_account: str, receiver: Receiver, webhook_secret: str
) -> None:
    job_id = service.call(api.jobs.submit, account_id=funded_account, kind="video").job_id

    delivery = waiting_notice(receiver, job_id)
    event = verify_webhook(delivery.body, delivery.headers, webhook_secret)

    assert (event.type_, event.job_id, event.account_id) == ("job.waiting", job_id, funded_account)
    assert event.data["status"] == "queued"
    assert delivery.headers["webhook-id"] == event.event_id
    tampered = delivery.body.replace(b'"queued"', b'"succeeded"')
    assert tampered != delivery.body
    with pytest.raises(WebhookVerificationError):
        verify_webhook(tampered, delivery.headers, webhook_secret)
    other_secret = "whsec_" + base64.b64encode(secrets.token_bytes(32)).decode()
    with pytest.raises(WebhookVerificationError):
        verify_webhook(delivery.body, delivery.headers, other_secret)


def test_a_delivery_more_than_five_minutes_off_is_refused(webhook_secret: str) -> None:
    body = b'{"event_id": "7", "type": "job.waiting"}'

    def signed_at(seconds_ago: int) -> dict[str, str]:
        at = datetime.fromtimestamp(time.time() - seconds_ago, tz=UTC)
        signature = Webhook(webhook_secret).sign("7", at, body.decode())
        return {
            "Webhook-Id": "7",
            "Webhook-Timestamp": str(int(at.timestamp())),
            "Webhook-Signature": signature,
        }

    assert Webhook(webhook_secret).verify(body, signed_at(240))  # 4 minutes: still fine
    with pytest.raises(WebhookVerificationError, match="too old"):
        verify_webhook(body, signed_at(360), webhook_secret)
    with pytest.raises(WebhookVerificationError, match="too new"):
        verify_webhook(body, signed_at(-360), webhook_secret)


@pytest.mark.parametrize("signature", ["", "v1", "v1,not base64!", "v2,AAAA"])
def test_a_malformed_signature_is_a_verification_error(webhook_secret: str, signature: str) -> None:
    headers = {"webhook-id": "7", "webhook-timestamp": str(int(time.time())), "webhook-signature": signature}

    with pytest.raises(WebhookVerificationError):
        verify_webhook(b"{}", headers, webhook_secret)
