from typing import Literal

LedgerEntryBodyKind = Literal[
    "adjustment",
    "bonus",
    "capture",
    "debit",
    "expiry",
    "grant",
    "job_refund",
    "refill",
    "refund",
    "top_up",
]

LEDGER_ENTRY_BODY_KIND_VALUES: set[LedgerEntryBodyKind] = {
    "adjustment",
    "bonus",
    "capture",
    "debit",
    "expiry",
    "grant",
    "job_refund",
    "refill",
    "refund",
    "top_up",
}


def check_ledger_entry_body_kind(value: str) -> LedgerEntryBodyKind:
    if value in LEDGER_ENTRY_BODY_KIND_VALUES:
        return value
    raise TypeError(
        f"Unexpected value {value!r}. Expected one of {LEDGER_ENTRY_BODY_KIND_VALUES!r}"
    )
