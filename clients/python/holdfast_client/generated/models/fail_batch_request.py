from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar

from attrs import define as _attrs_define

if TYPE_CHECKING:
    from ..models.fail_item import FailItem


T = TypeVar("T", bound="FailBatchRequest")


@_attrs_define
class FailBatchRequest:
    """`{"items": [...]}`: 1 to 100 jobs to fail.

    Attributes:
        items (list[FailItem]): Each item is checked on its own: a malformed item is answered 422 in its place.
    """

    items: list[FailItem]

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
        from ..models.fail_item import FailItem

        d = dict(src_dict)
        items = []
        _items = d.pop("items")
        for items_item_data in _items:
            items_item = FailItem.from_dict(items_item_data)

            items.append(items_item)

        fail_batch_request = cls(
            items=items,
        )

        return fail_batch_request
