from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.capture_line_type_0 import CaptureLineType0
    from ..models.capture_line_type_1 import CaptureLineType1


T = TypeVar("T", bound="CompleteRequest")


@_attrs_define
class CompleteRequest:
    """
    Attributes:
        lease_token (str): The token a lease handed out; a token of another lease is 409 `lease_lost`
        capture (list[CaptureLineType0 | CaptureLineType1] | None | Unset): Without it the whole hold is captured; with
            it each listed pocket is captured up
            to its hold and the others are released.
    """

    lease_token: str
    capture: list[CaptureLineType0 | CaptureLineType1] | None | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        from ..models.capture_line_type_0 import CaptureLineType0

        lease_token = self.lease_token

        capture: list[dict[str, Any]] | None | Unset
        if isinstance(self.capture, Unset):
            capture = UNSET
        elif isinstance(self.capture, list):
            capture = []
            for capture_type_0_item_data in self.capture:
                capture_type_0_item: dict[str, Any]
                if isinstance(capture_type_0_item_data, CaptureLineType0):
                    capture_type_0_item = capture_type_0_item_data.to_dict()
                else:
                    capture_type_0_item = capture_type_0_item_data.to_dict()

                capture.append(capture_type_0_item)

        else:
            capture = self.capture

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "lease_token": lease_token,
            }
        )
        if capture is not UNSET:
            field_dict["capture"] = capture

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.capture_line_type_0 import CaptureLineType0
        from ..models.capture_line_type_1 import CaptureLineType1

        d = dict(src_dict)
        lease_token = d.pop("lease_token")

        def _parse_capture(
            data: object,
        ) -> list[CaptureLineType0 | CaptureLineType1] | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, list):
                    raise TypeError()
                capture_type_0 = []
                _capture_type_0 = data
                for capture_type_0_item_data in _capture_type_0:

                    def _parse_capture_type_0_item(
                        data: object,
                    ) -> CaptureLineType0 | CaptureLineType1:
                        try:
                            if not isinstance(data, dict):
                                raise TypeError()
                            componentsschemas_capture_line_type_0 = (
                                CaptureLineType0.from_dict(data)
                            )

                            return componentsschemas_capture_line_type_0
                        except (TypeError, ValueError, AttributeError, KeyError):
                            pass
                        if not isinstance(data, dict):
                            raise TypeError()
                        componentsschemas_capture_line_type_1 = (
                            CaptureLineType1.from_dict(data)
                        )

                        return componentsschemas_capture_line_type_1

                    capture_type_0_item = _parse_capture_type_0_item(
                        capture_type_0_item_data
                    )

                    capture_type_0.append(capture_type_0_item)

                return capture_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(list[CaptureLineType0 | CaptureLineType1] | None | Unset, data)

        capture = _parse_capture(d.pop("capture", UNSET))

        complete_request = cls(
            lease_token=lease_token,
            capture=capture,
        )

        return complete_request
