from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

T = TypeVar("T", bound="UsageGroupBody")


@_attrs_define
class UsageGroupBody:
    """What one group spent in the period.

    Attributes:
        entries (int): Debits and captures of money.
        net (str): `spent` − `refunded`.
        net_micros (int):
        refunded (str): What job refunds gave back.
        refunded_micros (int):
        seconds (int): The seconds of the metered debits among them.
        spent (str): What they took.
        spent_micros (int):
        key (None | str | Unset): The account id (`group_by=account`), the job kind (`group_by=kind`; `null`: a
            debit that names no job of this engine, or one retention pruned) or the meter
            (`group_by=meter`; `null`: spending not metered, and job refunds).
    """

    entries: int
    net: str
    net_micros: int
    refunded: str
    refunded_micros: int
    seconds: int
    spent: str
    spent_micros: int
    key: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        entries = self.entries

        net = self.net

        net_micros = self.net_micros

        refunded = self.refunded

        refunded_micros = self.refunded_micros

        seconds = self.seconds

        spent = self.spent

        spent_micros = self.spent_micros

        key: None | str | Unset
        if isinstance(self.key, Unset):
            key = UNSET
        else:
            key = self.key

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "entries": entries,
                "net": net,
                "net_micros": net_micros,
                "refunded": refunded,
                "refunded_micros": refunded_micros,
                "seconds": seconds,
                "spent": spent,
                "spent_micros": spent_micros,
            }
        )
        if key is not UNSET:
            field_dict["key"] = key

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        entries = d.pop("entries")

        net = d.pop("net")

        net_micros = d.pop("net_micros")

        refunded = d.pop("refunded")

        refunded_micros = d.pop("refunded_micros")

        seconds = d.pop("seconds")

        spent = d.pop("spent")

        spent_micros = d.pop("spent_micros")

        def _parse_key(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        key = _parse_key(d.pop("key", UNSET))

        usage_group_body = cls(
            entries=entries,
            net=net,
            net_micros=net_micros,
            refunded=refunded,
            refunded_micros=refunded_micros,
            seconds=seconds,
            spent=spent,
            spent_micros=spent_micros,
            key=key,
        )

        usage_group_body.additional_properties = d
        return usage_group_body

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
