from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.ledger_entry_body import LedgerEntryBody


T = TypeVar("T", bound="LedgerPage")


@_attrs_define
class LedgerPage:
    """
    Attributes:
        currency (str): The currency (ISO 4217) of the money entries.
        entries (list[LedgerEntryBody]):
        next_ (None | str | Unset): The last id returned, or the given `after` when the page is empty.
    """

    currency: str
    entries: list[LedgerEntryBody]
    next_: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        currency = self.currency

        entries = []
        for entries_item_data in self.entries:
            entries_item = entries_item_data.to_dict()
            entries.append(entries_item)

        next_: None | str | Unset
        if isinstance(self.next_, Unset):
            next_ = UNSET
        else:
            next_ = self.next_

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "currency": currency,
                "entries": entries,
            }
        )
        if next_ is not UNSET:
            field_dict["next"] = next_

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.ledger_entry_body import LedgerEntryBody

        d = dict(src_dict)
        currency = d.pop("currency")

        entries = []
        _entries = d.pop("entries")
        for entries_item_data in _entries:
            entries_item = LedgerEntryBody.from_dict(entries_item_data)

            entries.append(entries_item)

        def _parse_next_(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        next_ = _parse_next_(d.pop("next", UNSET))

        ledger_page = cls(
            currency=currency,
            entries=entries,
            next_=next_,
        )

        ledger_page.additional_properties = d
        return ledger_page

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
