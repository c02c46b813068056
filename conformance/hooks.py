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
POCKETS = ["money", *sorted(CARD.get("allowances", {}))]
LANES = sorted({k["lane"] for k in CARD["kinds"].values()})
LANES += [f"{lane}_priority" for lane in LANES]
STALE_AFTER = CARD.get("timeouts", {}).get("stale_after_seconds", 1800)

for name, values in [
    ("holdfast-kind", KINDS),
    ("holdfast-plan", PLANS),
    ("holdfast-meter", METERS),
    ("holdfast-pocket", POCKETS),
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
