from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar

from attrs import define as _attrs_define

if TYPE_CHECKING:
    from ..models.debit_item_type_0 import DebitItemType0
    from ..models.debit_item_type_1 import DebitItemType1


T = TypeVar("T", bound="DebitBatchRequest")


@_attrs_define
class DebitBatchRequest:
    """`{"debits": [...]}`: 1 to 1,000 debits of any accounts.

    Attributes:
        debits (list[DebitItemType0 | DebitItemType1]): Each item is checked on its own: a malformed item is answered
            422 in its place.
    """

    debits: list[DebitItemType0 | DebitItemType1]

    def to_dict(self) -> dict[str, Any]:
        from ..models.debit_item_type_0 import DebitItemType0

        debits = []
        for debits_item_data in self.debits:
            debits_item: dict[str, Any]
            if isinstance(debits_item_data, DebitItemType0):
                debits_item = debits_item_data.to_dict()
            else:
                debits_item = debits_item_data.to_dict()

            debits.append(debits_item)

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "debits": debits,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.debit_item_type_0 import DebitItemType0
        from ..models.debit_item_type_1 import DebitItemType1

        d = dict(src_dict)
        debits = []
        _debits = d.pop("debits")
        for debits_item_data in _debits:

            def _parse_debits_item(data: object) -> DebitItemType0 | DebitItemType1:
                try:
                    if not isinstance(data, dict):
                        raise TypeError()
                    componentsschemas_debit_item_type_0 = DebitItemType0.from_dict(data)

                    return componentsschemas_debit_item_type_0
                except (TypeError, ValueError, AttributeError, KeyError):
                    pass
                if not isinstance(data, dict):
                    raise TypeError()
                componentsschemas_debit_item_type_1 = DebitItemType1.from_dict(data)

                return componentsschemas_debit_item_type_1

            debits_item = _parse_debits_item(debits_item_data)

            debits.append(debits_item)

        debit_batch_request = cls(
            debits=debits,
        )

        return debit_batch_request
