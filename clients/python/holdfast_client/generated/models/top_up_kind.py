from typing import Literal

TopUpKind = Literal["bonus", "top_up"]

TOP_UP_KIND_VALUES: set[TopUpKind] = {
    "bonus",
    "top_up",
}


def check_top_up_kind(value: str) -> TopUpKind:
    if value in TOP_UP_KIND_VALUES:
        return value
    raise TypeError(
        f"Unexpected value {value!r}. Expected one of {TOP_UP_KIND_VALUES!r}"
    )
