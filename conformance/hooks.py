"""What the OpenAPI document cannot say, told to schemathesis.

The run tests the document the server under test serves (`GET /openapi.json`), which
carries the rate card in force: its kinds, plans, meters, allowance pockets and lanes as
enums and its longest lease (`stale_after_seconds`) as the maximum `lease_seconds`. So
nothing here teaches schemathesis a name or a bound: every generated value is what the
served document alone allows, as for any client generator or API tester.

What remains are the rules no JSON Schema can state (docs/API.md "Conformance"), each
answered with a documented 422: a failure whose request breaks one of them and whose
answer names it is the service keeping its contract, not a mismatch.
"""

import schemathesis

STATE_RULES = [
    # A range whose start is after its end (two parameters).
    ("/v1/ledger", "since: must not be after until"),
    ("/v1/accounts/{account_id}/statement", "from: must not be after to"),
    ("/v1/usage", "from: must not be after to"),
    # A balance or pocket never leaves ±(2^53 − 1) micros, however many writes add up.
    (None, '"code":"amount_out_of_range"'),
    # A capture must fit the job's hold, which only the job knows.
    ("/v1/jobs/{job_id}/complete", "capture: "),
    # A job charged in allowance items is refunded in whole items: the job decides.
    ("/v1/jobs/{job_id}/refund", "is refunded in whole items"),
    # A grant goes to an allowance pocket the account has: its plan decides, and the
    # document can only list the card's pockets (found by a random seed, 552072588).
    ("/v1/accounts/{account_id}/grants", "pocket: the account has no "),
]


@schemathesis.hook
def filter_failure(context, failure, case, response):
    """Drop only a failure that is one of STATE_RULES: a 422 on its operation whose message
    names the rule."""
    if response.status_code != 422:
        return True
    for path, message in STATE_RULES:
        if (path is None or case.operation.path == path) and message in response.text:
            return False
    return True
