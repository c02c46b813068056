from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar

from attrs import define as _attrs_define

if TYPE_CHECKING:
    from ..models.complete_item import CompleteItem


T = TypeVar("T", bound="CompleteBatchRequest")


@_attrs_define
class CompleteBatchRequest:
    """`{"items": [...]}`: 1 to 100 jobs to complete.

    Attributes:
        items (list[CompleteItem]): Each item is checked on its own: a malformed item is answered 422 in its place.
    """

    items: list[CompleteItem]

    def to_dict(self) -> dict[str, Any]:
        items = []
        for items_item_data in self.items:
            items_item = items_item_data.to_dict()
            items.append(items_item)

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "items": items,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.complete_item import CompleteItem

        d = dict(src_dict)
        items = []
        _items = d.pop("items")
        for items_item_data in _items:
            items_item = CompleteItem.from_dict(items_item_data)

            items.append(items_item)

        complete_batch_request = cls(
            items=items,
        )

        return complete_batch_request
