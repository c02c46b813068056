from typing import Literal

JobBodyStatus = Literal[
    "canceled", "expired", "failed", "in_progress", "queued", "succeeded"
]

JOB_BODY_STATUS_VALUES: set[JobBodyStatus] = {
    "canceled",
    "expired",
    "failed",
    "in_progress",
    "queued",
    "succeeded",
}


def check_job_body_status(value: str) -> JobBodyStatus:
    if value in JOB_BODY_STATUS_VALUES:
        return value
    raise TypeError(
        f"Unexpected value {value!r}. Expected one of {JOB_BODY_STATUS_VALUES!r}"
    )
