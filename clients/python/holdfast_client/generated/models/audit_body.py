from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

if TYPE_CHECKING:
    from ..models.violation_body import ViolationBody


T = TypeVar("T", bound="AuditBody")


@_attrs_define
class AuditBody:
    """
    Attributes:
        checked_at (datetime.datetime): When the audit that gave this answer started (RFC 3339): a call made while
            another ran shares that run's answer.
        ok (bool):
        violations (list[ViolationBody]):
    """

    checked_at: datetime.datetime
    ok: bool
    violations: list[ViolationBody]
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        checked_at = self.checked_at.isoformat()

        ok = self.ok

        violations = []
        for violations_item_data in self.violations:
            violations_item = violations_item_data.to_dict()
            violations.append(violations_item)

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "checked_at": checked_at,
                "ok": ok,
                "violations": violations,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.violation_body import ViolationBody

        d = dict(src_dict)
        checked_at = datetime.datetime.fromisoformat(d.pop("checked_at"))

        ok = d.pop("ok")

        violations = []
        _violations = d.pop("violations")
        for violations_item_data in _violations:
            violations_item = ViolationBody.from_dict(violations_item_data)

            violations.append(violations_item)

        audit_body = cls(
            checked_at=checked_at,
            ok=ok,
            violations=violations,
        )

        audit_body.additional_properties = d
        return audit_body

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
