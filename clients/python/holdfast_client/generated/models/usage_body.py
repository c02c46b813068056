from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.usage_group_body import UsageGroupBody


T = TypeVar("T", bound="UsageBody")


@_attrs_define
class UsageBody:
    """A usage report.

    Attributes:
        currency (str):
        from_ (str):
        group_by (str): `account`, `kind` or `meter`.
        groups (list[UsageGroupBody]):
        to (str):
        next_ (None | str | Unset): `group_by=account`: the `after` of the next page (`null`: this was the last).
    """

    currency: str
    from_: str
    group_by: str
    groups: list[UsageGroupBody]
    to: str
    next_: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        currency = self.currency

        from_ = self.from_

        group_by = self.group_by

        groups = []
        for groups_item_data in self.groups:
            groups_item = groups_item_data.to_dict()
            groups.append(groups_item)

        to = self.to

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
                "from": from_,
                "group_by": group_by,
                "groups": groups,
                "to": to,
            }
        )
        if next_ is not UNSET:
            field_dict["next"] = next_

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.usage_group_body import UsageGroupBody

        d = dict(src_dict)
        currency = d.pop("currency")

        from_ = d.pop("from")

        group_by = d.pop("group_by")

        groups = []
        _groups = d.pop("groups")
        for groups_item_data in _groups:
            groups_item = UsageGroupBody.from_dict(groups_item_data)

            groups.append(groups_item)

        to = d.pop("to")

        def _parse_next_(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        next_ = _parse_next_(d.pop("next", UNSET))

        usage_body = cls(
            currency=currency,
            from_=from_,
            group_by=group_by,
            groups=groups,
            to=to,
            next_=next_,
        )

        usage_body.additional_properties = d
        return usage_body

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
