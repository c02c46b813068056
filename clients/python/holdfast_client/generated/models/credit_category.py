from typing import Literal

CreditCategory = Literal["paid", "promotional"]

CREDIT_CATEGORY_VALUES: set[CreditCategory] = {
    "paid",
    "promotional",
}


def check_credit_category(value: str) -> CreditCategory:
    if value in CREDIT_CATEGORY_VALUES:
        return value
    raise TypeError(
        f"Unexpected value {value!r}. Expected one of {CREDIT_CATEGORY_VALUES!r}"
    )
