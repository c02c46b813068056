from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

T = TypeVar("T", bound="JobKindSpendBody")


@_attrs_define
class JobKindSpendBody:
    """
    Attributes:
        amount (str):
        amount_micros (int):
        entries (int):
        job_kind (None | str | Unset):
    """

    amount: str
    amount_micros: int
    entries: int
    job_kind: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        amount = self.amount

        amount_micros = self.amount_micros

        entries = self.entries

        job_kind: None | str | Unset
        if isinstance(self.job_kind, Unset):
            job_kind = UNSET
        else:
            job_kind = self.job_kind

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "amount": amount,
                "amount_micros": amount_micros,
                "entries": entries,
            }
        )
        if job_kind is not UNSET:
            field_dict["job_kind"] = job_kind

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        amount = d.pop("amount")

        amount_micros = d.pop("amount_micros")

        entries = d.pop("entries")

        def _parse_job_kind(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        job_kind = _parse_job_kind(d.pop("job_kind", UNSET))

        job_kind_spend_body = cls(
            amount=amount,
            amount_micros=amount_micros,
            entries=entries,
            job_kind=job_kind,
        )

        job_kind_spend_body.additional_properties = d
        return job_kind_spend_body

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
