"""Fixtures: a real `holdfast serve` per test (tests/holdfast_server.py), with a webhook
receiver configured in its rate card, and a client for each role."""

from __future__ import annotations

import base64
import secrets
import string
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from holdfast_server import Server, holdfast_serve
from receiver import Receiver
from support import FAST_RETRY

from holdfast_client import Holdfast, api

RATE_CARD = Path(__file__).with_name("rate-card.toml")


@pytest.fixture
def webhook_secret() -> str:
    return "whsec_" + base64.b64encode(secrets.token_bytes(32)).decode()


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    receiver = Receiver()
    yield receiver
    receiver.close()


@pytest.fixture
def server(receiver: Receiver, webhook_secret: str) -> Iterator[Server]:
    card = string.Template(RATE_CARD.read_text()).substitute(
        webhook_url=receiver.url, webhook_secret=webhook_secret
    )
    with holdfast_serve(card) as running:
        yield running


@pytest.fixture
def service(server: Server) -> Holdfast:
    return Holdfast(server.url, server.service_key, retry=FAST_RETRY)


@pytest.fixture
def worker_client(server: Server) -> Holdfast:
    return Holdfast(server.url, server.worker_key, retry=FAST_RETRY)


@pytest.fixture
def admin(server: Server) -> Holdfast:
    return Holdfast(server.url, server.admin_key, retry=FAST_RETRY)


@pytest.fixture
def funded_account(service: Holdfast) -> str:
    """A new account on the free plan with 10.00 on it."""
    account_id = f"acct-{uuid.uuid4().hex[:12]}"
    service.call(api.accounts.put_account, account_id=account_id, plan="free")
    service.call(api.money.top_up, account_id=account_id, amount="10.00")
    return account_id
