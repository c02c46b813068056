from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

if TYPE_CHECKING:
    from ..models.pocket_at_body import PocketAtBody


T = TypeVar("T", bound="BalanceAtBodyAllowances")


@_attrs_define
class BalanceAtBodyAllowances:
    """Each allowance pocket that existed at `at`."""

    additional_properties: dict[str, PocketAtBody] = _attrs_field(
        init=False, factory=dict
    )

    def to_dict(self) -> dict[str, Any]:

        field_dict: dict[str, Any] = {}
        for prop_name, prop in self.additional_properties.items():
            field_dict[prop_name] = prop.to_dict()

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.pocket_at_body import PocketAtBody

        d = dict(src_dict)
        balance_at_body_allowances = cls()

        additional_properties = {}
        for prop_name, prop_dict in d.items():
            additional_property = PocketAtBody.from_dict(prop_dict)

            additional_properties[prop_name] = additional_property

        balance_at_body_allowances.additional_properties = additional_properties
        return balance_at_body_allowances

    @property
    def additional_keys(self) -> list[str]:
        return list(self.additional_properties.keys())

    def __getitem__(self, key: str) -> PocketAtBody:
        return self.additional_properties[key]

    def __setitem__(self, key: str, value: PocketAtBody) -> None:
        self.additional_properties[key] = value

    def __delitem__(self, key: str) -> None:
        del self.additional_properties[key]

    def __contains__(self, key: str) -> bool:
        return key in self.additional_properties
