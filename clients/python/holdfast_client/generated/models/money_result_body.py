from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

if TYPE_CHECKING:
    from ..models.account_body import AccountBody
    from ..models.ledger_entry_body import LedgerEntryBody


T = TypeVar("T", bound="MoneyResultBody")


@_attrs_define
class MoneyResultBody:
    """The answer to a top-up, bonus, debit or refund.

    Attributes:
        account (AccountBody): An account with every pocket as it is effective now.
        entry (LedgerEntryBody): One ledger entry: one change of one pocket.
    """

    account: AccountBody
    entry: LedgerEntryBody
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        account = self.account.to_dict()

        entry = self.entry.to_dict()

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "account": account,
                "entry": entry,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.account_body import AccountBody
        from ..models.ledger_entry_body import LedgerEntryBody

        d = dict(src_dict)
        account = AccountBody.from_dict(d.pop("account"))

        entry = LedgerEntryBody.from_dict(d.pop("entry"))

        money_result_body = cls(
            account=account,
            entry=entry,
        )

        money_result_body.additional_properties = d
        return money_result_body

    @property
    def additional_keys(self) -> list[str]:
        return list(self.additional_properties.keys())

    def __getitem__(self, key: str) -> Any:
        return self.additional_properties[key]

    def __setitem__(self, key: str, value: Any) -> None:
        self.additional_properties[key] = value

    def __delitem__(self, key: str) -> None:
        del self.additional_properties[key]

    def __contains__(self, key: str) -> bool:
        return key in self.additional_properties
