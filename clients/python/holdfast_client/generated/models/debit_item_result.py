from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.account_body import AccountBody
    from ..models.error_detail import ErrorDetail
    from ..models.ledger_entry_body import LedgerEntryBody


T = TypeVar("T", bound="DebitItemResult")


@_attrs_define
class DebitItemResult:
    """One item's answer: the status and body the single debit would have answered.

    Attributes:
        status (int): 201 debited, 200 a replay of the key, or the refusal's status (402, 403, 404, 409,
            422).
        account (AccountBody | None | Unset):
        entry (LedgerEntryBody | None | Unset):
        error (ErrorDetail | None | Unset):
    """

    status: int
    account: AccountBody | None | Unset = UNSET
    entry: LedgerEntryBody | None | Unset = UNSET
    error: ErrorDetail | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from ..models.account_body import AccountBody
        from ..models.error_detail import ErrorDetail
        from ..models.ledger_entry_body import LedgerEntryBody

        status = self.status

        account: dict[str, Any] | None | Unset
        if isinstance(self.account, Unset):
            account = UNSET
        elif isinstance(self.account, AccountBody):
            account = self.account.to_dict()
        else:
            account = self.account

        entry: dict[str, Any] | None | Unset
        if isinstance(self.entry, Unset):
            entry = UNSET
        elif isinstance(self.entry, LedgerEntryBody):
            entry = self.entry.to_dict()
        else:
            entry = self.entry

        error: dict[str, Any] | None | Unset
        if isinstance(self.error, Unset):
            error = UNSET
        elif isinstance(self.error, ErrorDetail):
            error = self.error.to_dict()
        else:
            error = self.error

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "status": status,
            }
        )
        if account is not UNSET:
            field_dict["account"] = account
        if entry is not UNSET:
            field_dict["entry"] = entry
        if error is not UNSET:
            field_dict["error"] = error

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.account_body import AccountBody
        from ..models.error_detail import ErrorDetail
        from ..models.ledger_entry_body import LedgerEntryBody

        d = dict(src_dict)
        status = d.pop("status")

        def _parse_account(data: object) -> AccountBody | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                account_type_1 = AccountBody.from_dict(data)

                return account_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(AccountBody | None | Unset, data)

        account = _parse_account(d.pop("account", UNSET))

        def _parse_entry(data: object) -> LedgerEntryBody | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                entry_type_1 = LedgerEntryBody.from_dict(data)

                return entry_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(LedgerEntryBody | None | Unset, data)

        entry = _parse_entry(d.pop("entry", UNSET))

        def _parse_error(data: object) -> ErrorDetail | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                error_type_1 = ErrorDetail.from_dict(data)

                return error_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(ErrorDetail | None | Unset, data)

        error = _parse_error(d.pop("error", UNSET))

        debit_item_result = cls(
            status=status,
            account=account,
            entry=entry,
            error=error,
        )

        debit_item_result.additional_properties = d
        return debit_item_result

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
