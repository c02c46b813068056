from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

T = TypeVar("T", bound="PassBody")


@_attrs_define
class PassBody:
    """What a pass did.

    Attributes:
        adjusted (int): Reconciliation: adjustment entries written.
        drifted (int): Reconciliation: differences in `held` or the counters, reported, not adjusted.
        processed (int): Jobs (sweep) or accounts (reconcile, reactivate) the run handled.
    """

    adjusted: int
    drifted: int
    processed: int
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        adjusted = self.adjusted

        drifted = self.drifted

        processed = self.processed

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "adjusted": adjusted,
                "drifted": drifted,
                "processed": processed,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        adjusted = d.pop("adjusted")

        drifted = d.pop("drifted")

        processed = d.pop("processed")

        pass_body = cls(
            adjusted=adjusted,
            drifted=drifted,
            processed=processed,
        )

        pass_body.additional_properties = d
        return pass_body

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
