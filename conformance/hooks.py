"""What the OpenAPI document cannot say, told to schemathesis from the rate card in force.

The document is the same for every deployment, so names that come from the rate card
(kinds, plans, meters, pockets, lanes) are strings with a `holdfast-*` format, and the
longest lease is the card's `stale_after_seconds`. This module registers a generator for
each such format that draws from the card the server under test runs with
(HOLDFAST_RATE_CARD, default examples/default.toml), and keeps a generated
`lease_seconds` within the card's bound. Nothing else is changed: every other value is
what the document alone allows.
"""

import os
import pathlib
import tomllib

import schemathesis
from hypothesis import strategies as st

CARD_PATH = pathlib.Path(
    os.environ.get(
        "HOLDFAST_RATE_CARD",
        pathlib.Path(__file__).resolve().parent.parent / "examples" / "default.toml",
    )
)
CARD = tomllib.loads(CARD_PATH.read_text())

KINDS = sorted(CARD["kinds"])
PLANS = sorted(CARD["plans"])
METERS = sorted(CARD.get("meters", {}))
ALLOWANCES = sorted(CARD.get("allowances", {}))
LANES = sorted({k["lane"] for k in CARD["kinds"].values()})
LANES += [f"{lane}_priority" for lane in LANES]
STALE_AFTER = CARD.get("timeouts", {}).get("stale_after_seconds", 1800)

for name, values in [
    ("holdfast-kind", KINDS),
    ("holdfast-plan", PLANS),
    ("holdfast-meter", METERS),
    ("holdfast-allowance", ALLOWANCES),
    ("holdfast-lane", LANES),
]:
    schemathesis.openapi.format(name, st.sampled_from(values))


@schemathesis.hook
def map_body(context, body):
    """A lease asks for at most the card's stale_after_seconds (API.md "Workers")."""
    if (
        isinstance(body, dict)
        and isinstance(body.get("lease_seconds"), int)
        and not isinstance(body["lease_seconds"], bool)
        and body["lease_seconds"] > STALE_AFTER
    ):
        body = {**body, "lease_seconds": STALE_AFTER}
    return body


# Rules the document cannot state, each answered with a documented 422 (docs/API.md
# "Conformance"): a failure whose request breaks one of them and whose answer names it is
# the service keeping its contract, not a mismatch.
def _lease_over_card(case):
    lease = case.body.get("lease_seconds") if isinstance(case.body, dict) else None
    return isinstance(lease, (int, float)) and not isinstance(lease, bool) and lease > STALE_AFTER


STATE_RULES = [
    # The coverage phase's boundary values bypass `map_body`.
    ("/v1/lanes/{lane}/lease", _lease_over_card, f"lease_seconds: must be 1 to {STALE_AFTER}"),
    # A range whose start is after its end (two parameters).
    ("/v1/ledger", lambda case: True, "since: must not be after until"),
    # A balance or pocket never leaves ±(2^53 − 1) micros, however many writes add up.
    (None, lambda case: True, '"code":"amount_out_of_range"'),
    # A capture must fit the job's hold, which only the job knows.
    ("/v1/jobs/{job_id}/complete", lambda case: True, "capture: "),
    # A job charged in allowance items is refunded in whole items: the job decides.
    ("/v1/jobs/{job_id}/refund", lambda case: True, "is refunded in whole items"),
]


@schemathesis.hook
def filter_failure(context, failure, case, response):
    """Drop only a failure that is one of STATE_RULES: its operation, its request breaking
    the rule, and a 422 whose message names the rule."""
    if response.status_code != 422:
        return True
    for path, broken, message in STATE_RULES:
        on_path = path is None or case.operation.path == path
        if on_path and broken(case) and message in response.text:
            return False
    return True
