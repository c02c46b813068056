from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

T = TypeVar("T", bound="StripeEvent")


@_attrs_define
class StripeEvent:
    """A Stripe event as Stripe sends it; the engine reads `type` and `data.object`.

    Attributes:
        data (Any): `{"object": {…}}`: the Checkout Session, PaymentIntent, Charge or Dispute.
        id (str): `evt_…`
        type_ (str): `checkout.session.completed`, `payment_intent.succeeded`, `charge.refunded`,
            `charge.dispute.created`, `charge.dispute.closed`, …
    """

    data: Any
    id: str
    type_: str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        data = self.data

        id = self.id

        type_ = self.type_

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "data": data,
                "id": id,
                "type": type_,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        data = d.pop("data")

        id = d.pop("id")

        type_ = d.pop("type")

        stripe_event = cls(
            data=data,
            id=id,
            type_=type_,
        )

        stripe_event.additional_properties = d
        return stripe_event

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
