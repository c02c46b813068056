"""Helpers the client's tests share (fixtures are in conftest.py)."""

from __future__ import annotations

from holdfast_client import Holdfast, RetryPolicy, api

# Quick retries: a test should not wait seconds for a back-off.
FAST_RETRY = RetryPolicy(max_attempts=4, base_delay_seconds=0.05, max_delay_seconds=2.0)


def ledger_entries(admin: Holdfast, account_id: str) -> list:
    """Every ledger entry of the account, oldest first."""
    return admin.call(api.money.account_ledger, account_id=account_id, limit=1000).entries


def money_entries(admin: Holdfast, account_id: str) -> list[tuple[str, str, str | None]]:
    """The account's money entries as (kind, delta, ref)."""
    return [
        (entry.kind, entry.delta, entry.ref or None)
        for entry in ledger_entries(admin, account_id)
        if entry.pocket == "money"
    ]
