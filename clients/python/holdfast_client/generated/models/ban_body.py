from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

if TYPE_CHECKING:
    from ..models.account_body import AccountBody
    from ..models.job_body import JobBody


T = TypeVar("T", bound="BanBody")


@_attrs_define
class BanBody:
    """The answer to a ban: the account and the queued jobs it canceled.

    Attributes:
        account (AccountBody): An account with every pocket as it is effective now.
        canceled (list[JobBody]):
    """

    account: AccountBody
    canceled: list[JobBody]
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        account = self.account.to_dict()

        canceled = []
        for canceled_item_data in self.canceled:
            canceled_item = canceled_item_data.to_dict()
            canceled.append(canceled_item)

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "account": account,
                "canceled": canceled,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.account_body import AccountBody
        from ..models.job_body import JobBody

        d = dict(src_dict)
        account = AccountBody.from_dict(d.pop("account"))

        canceled = []
        _canceled = d.pop("canceled")
        for canceled_item_data in _canceled:
            canceled_item = JobBody.from_dict(canceled_item_data)

            canceled.append(canceled_item)

        ban_body = cls(
            account=account,
            canceled=canceled,
        )

        ban_body.additional_properties = d
        return ban_body

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
