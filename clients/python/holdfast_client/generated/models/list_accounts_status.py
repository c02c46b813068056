from typing import Literal

ListAccountsStatus = Literal["active", "banned", "blocked", "suspended"]

LIST_ACCOUNTS_STATUS_VALUES: set[ListAccountsStatus] = {
    "active",
    "banned",
    "blocked",
    "suspended",
}


def check_list_accounts_status(value: str) -> ListAccountsStatus:
    if value in LIST_ACCOUNTS_STATUS_VALUES:
        return value
    raise TypeError(
        f"Unexpected value {value!r}. Expected one of {LIST_ACCOUNTS_STATUS_VALUES!r}"
    )
