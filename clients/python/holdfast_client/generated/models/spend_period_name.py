from typing import Literal

SpendPeriodName = Literal["day", "month"]

SPEND_PERIOD_NAME_VALUES: set[SpendPeriodName] = {
    "day",
    "month",
}


def check_spend_period_name(value: str) -> SpendPeriodName:
    if value in SPEND_PERIOD_NAME_VALUES:
        return value
    raise TypeError(
        f"Unexpected value {value!r}. Expected one of {SPEND_PERIOD_NAME_VALUES!r}"
    )
