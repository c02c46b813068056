from typing import Literal

ExportLedgerKind = Literal[
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

EXPORT_LEDGER_KIND_VALUES: set[ExportLedgerKind] = {
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


def check_export_ledger_kind(value: str) -> ExportLedgerKind:
    if value in EXPORT_LEDGER_KIND_VALUES:
        return value
    raise TypeError(
        f"Unexpected value {value!r}. Expected one of {EXPORT_LEDGER_KIND_VALUES!r}"
    )
