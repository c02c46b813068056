from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

if TYPE_CHECKING:
    from ..models.account_body import AccountBody
    from ..models.job_body import JobBody
    from ..models.ledger_entry_body import LedgerEntryBody


T = TypeVar("T", bound="JobRefundBody")


@_attrs_define
class JobRefundBody:
    """The answer to a job refund.

    Attributes:
        account (AccountBody): An account with every pocket as it is effective now.
        entries (list[LedgerEntryBody]): One `job_refund` entry per pocket given back to.
        job (JobBody):
    """

    account: AccountBody
    entries: list[LedgerEntryBody]
    job: JobBody
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        account = self.account.to_dict()

        entries = []
        for entries_item_data in self.entries:
            entries_item = entries_item_data.to_dict()
            entries.append(entries_item)

        job = self.job.to_dict()

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "account": account,
                "entries": entries,
                "job": job,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.account_body import AccountBody
        from ..models.job_body import JobBody
        from ..models.ledger_entry_body import LedgerEntryBody

        d = dict(src_dict)
        account = AccountBody.from_dict(d.pop("account"))

        entries = []
        _entries = d.pop("entries")
        for entries_item_data in _entries:
            entries_item = LedgerEntryBody.from_dict(entries_item_data)

            entries.append(entries_item)

        job = JobBody.from_dict(d.pop("job"))

        job_refund_body = cls(
            account=account,
            entries=entries,
            job=job,
        )

        job_refund_body.additional_properties = d
        return job_refund_body

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
