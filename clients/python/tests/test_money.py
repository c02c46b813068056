"""Accounts and money through the client, against a real server."""

from __future__ import annotations

import datetime
import time
import uuid

import pytest
from support import money_entries

from holdfast_client import Holdfast, HoldfastError, api


def test_create_top_up_and_read_the_balance(service: Holdfast, admin: Holdfast) -> None:
    account = service.call(api.accounts.put_account, account_id="acme", plan="free")
    assert (account.account_id, account.balance_micros) == ("acme", 0)

    result = service.call(api.money.top_up, account_id="acme", amount="10.00")

    assert result.entry.kind == "top_up"
    assert result.account.balance == "10.00"
    again = service.call(api.accounts.get_account, account_id="acme")
    assert (again.balance_micros, again.available_micros, again.held_micros) == (10_000_000, 10_000_000, 0)
    assert money_entries(admin, "acme") == [("top_up", "10.00", None)]


def test_each_logical_call_has_its_own_key_unless_one_is_given(
    service: Holdfast, admin: Holdfast, funded_account: str
) -> None:
    service.call(api.money.top_up, account_id=funded_account, amount="1.00")
    service.call(api.money.top_up, account_id=funded_account, amount="1.00")
    given = {"account_id": funded_account, "amount": "2.00", "idempotency_key": "bought-2"}
    first = service.call(api.money.top_up, **given)
    replay = service.call(api.money.top_up, **given)

    assert replay.entry.entry_id == first.entry.entry_id
    assert replay.account.balance == "14.00"
    kinds = [kind for kind, _delta, _ref in money_entries(admin, funded_account)]
    assert kinds == ["top_up"] * 4  # 10.00 (the fixture), 1.00, 1.00, 2.00 once


def test_a_refused_debit_raises_its_code_and_changes_nothing(
    service: Holdfast, admin: Holdfast, funded_account: str
) -> None:
    before = money_entries(admin, funded_account)

    with pytest.raises(HoldfastError) as refused:
        service.call(api.money.debit, account_id=funded_account, amount="10.01")

    assert (refused.value.status, refused.value.code) == (402, "insufficient_funds")
    assert money_entries(admin, funded_account) == before
    assert service.call(api.accounts.get_account, account_id=funded_account).balance == "10.00"


@pytest.mark.parametrize("amount", ["0", "1.0000001", "-1", "1e3"])
def test_a_bad_amount_is_invalid_request(
    service: Holdfast, admin: Holdfast, funded_account: str, amount: str
) -> None:
    with pytest.raises(HoldfastError) as refused:
        service.call(api.money.top_up, account_id=funded_account, amount=amount)

    assert (refused.value.status, refused.value.code) == (422, "invalid_request")
    assert "amount" in refused.value.message
    assert money_entries(admin, funded_account) == [("top_up", "10.00", None)]


def test_an_unknown_account_is_account_not_found(service: Holdfast) -> None:
    with pytest.raises(HoldfastError) as refused:
        service.call(api.accounts.get_account, account_id=f"nobody-{uuid.uuid4().hex[:8]}")

    assert (refused.value.status, refused.value.code) == (404, "account_not_found")


def test_a_wrong_or_missing_field_is_refused_before_sending(service: Holdfast) -> None:
    with pytest.raises(TypeError, match="colour"):
        service.call(api.money.top_up, account_id="acme", amount="1.00", colour="red")
    with pytest.raises(TypeError, match="amount"):
        service.call(api.money.top_up, account_id="acme")


def test_a_statement_and_usage_by_meter(service: Holdfast, admin: Holdfast, funded_account: str) -> None:
    usage = {"meter": "linux-small", "seconds": 90}
    metered = service.call(api.money.debit, account_id=funded_account, usage=usage)
    plain = service.call(api.money.debit, account_id=funded_account, amount="0.25")

    assert (metered.entry.meter, metered.entry.seconds) == ("linux-small", 90)
    assert "meter" not in plain.entry.to_dict()

    statement = service.call(api.money.statement, account_id=funded_account)

    assert (statement.opening_balance, statement.closing_balance) == ("0.00", "9.741")
    by_meter = [(line.meter, line.entries, line.seconds, line.amount) for line in statement.spending_by_meter]
    assert by_meter == [("linux-small", 1, 90, "0.009"), (None, 1, 0, "0.25")]
    report = admin.call(api.money.usage, group_by="meter", account_id=funded_account)
    assert [(g.key, g.seconds, g.spent_micros) for g in report.groups] == [
        ("linux-small", 90, 9_000),
        (None, 0, 250_000),
    ]
    with pytest.raises(HoldfastError) as refused:
        service.call(api.money.usage)
    assert refused.value.status == 403


def test_the_balance_at_a_time(service: Holdfast, funded_account: str) -> None:
    before = service.call(api.money.balance_at, account_id=funded_account)
    time.sleep(0.005)  # past SQLite's millisecond clock: the debit is after `before.at`
    service.call(api.money.debit, account_id=funded_account, amount="0.25")

    now = service.call(api.money.balance_at, account_id=funded_account)
    at = datetime.datetime.fromisoformat(before.at)
    then = service.call(api.money.balance_at, account_id=funded_account, at=at)

    assert (before.balance, now.balance, now.available) == ("10.00", "9.75", "9.75")
    assert (then.balance, then.last_entry_id) == (before.balance, before.last_entry_id)
    assert now.last_entry_id > before.last_entry_id
    with pytest.raises(HoldfastError) as refused:
        service.call(api.money.balance_at, account_id="nobody-here")
    assert (refused.value.status, refused.value.code) == (404, "account_not_found")


def test_a_spend_limit_is_shown_and_refuses_past_it(service: Holdfast, funded_account: str) -> None:
    rule = {"limit": "1.00", "period": "day", "alerts": ["50%"]}
    account = service.call(api.accounts.put_account, account_id=funded_account, plan="free", spend=rule)
    assert (account.spend.limit, account.spend.period, account.spend.alerts) == ("1.00", "day", ["50%"])

    service.call(api.money.debit, account_id=funded_account, amount="1.00")
    with pytest.raises(HoldfastError) as refused:
        service.call(api.money.debit, account_id=funded_account, amount="0.01")

    assert (refused.value.status, refused.value.code) == (402, "spend_limit_reached")
    shown = service.call(api.accounts.get_account, account_id=funded_account).spend
    assert (shown.spent, shown.left) == ("1.00", "0.00")
    with pytest.raises(HoldfastError) as invalid:
        service.call(
            api.accounts.put_account, account_id=funded_account, plan="free", spend={"alerts": ["50%"]}
        )
    assert (invalid.value.status, invalid.value.code) == (422, "invalid_request")
