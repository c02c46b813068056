"""The operator console in headless Chromium (Debian's package, driven by Playwright; no
browser is downloaded), against a real `holdfast serve` on SQLite and on PostgreSQL.

What an operator does: sign in (with the keyboard), find an account after a top-up and
see its balance, follow a job from submit to complete and see its capture in the ledger,
block and unblock an account, watch a failing webhook endpoint's delivery go dead and
redeliver it once the endpoint is back, print an account's statement to a one-page PDF; and what must not happen: a viewer sees no
action, and a POST without the session's CSRF token changes nothing. Every page is
saved as a screenshot, at 1280 px and on a phone's width, and read without JavaScript.
"""

from __future__ import annotations

import io
import os
import re
import string
import subprocess
import sys
import threading
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx
import pypdf
import pytest
from playwright.sync_api import Browser, BrowserContext, Page, expect, sync_playwright

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "clients/python/tests"))
from holdfast_server import HOLDFAST_BIN, Server, holdfast_serve, wait_for  # noqa: E402

CARD = (REPO / "clients/python/tests/rate-card.toml").read_text()
SHOTS = Path(os.environ.get("HOLDFAST_E2E_SCREENSHOTS", REPO / "target/ci/e2e-screenshots"))
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
# As root in a container, Chromium needs --no-sandbox; the rest keep it off this machine's
# closed network (it would try Google's hosts at every start).
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


class Endpoint:
    """A webhook endpoint that answers 500 until `healthy` is set, then 204."""

    def __init__(self) -> None:
        self.healthy = False
        self.delivered: list[bytes] = []
        endpoint = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                if endpoint.healthy:
                    endpoint.delivered.append(body)
                self.send_response(204 if endpoint.healthy else 500)
                self.end_headers()

            def log_message(self, *_args: object) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self._server.server_port}/hooks"
        threading.Thread(target=self._server.serve_forever, args=(0.05,), daemon=True).start()

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()


@dataclass
class Deployment:
    backend: str
    server: Server
    endpoint: Endpoint
    viewer_key: str

    def api(self, key: str) -> httpx.Client:
        return httpx.Client(base_url=self.server.url, headers={"Authorization": f"Bearer {key}"}, timeout=30)


def _viewer_key(server: Server) -> str:
    done = subprocess.run(
        [HOLDFAST_BIN, "key", "create", "--role", "viewer", "--database", server.database_url],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return done.stdout.strip()


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def deployment(request: pytest.FixtureRequest) -> Iterator[Deployment]:
    backend = request.param
    postgres = os.environ.get("HOLDFAST_TEST_POSTGRES")
    if backend == "postgres" and not postgres:
        pytest.skip("HOLDFAST_TEST_POSTGRES is not set")
    saved = os.environ.pop("HOLDFAST_TEST_POSTGRES", None)
    if backend == "postgres":
        os.environ["HOLDFAST_TEST_POSTGRES"] = postgres or ""
    endpoint = Endpoint()
    card = string.Template(CARD).substitute(webhook_url=endpoint.url, webhook_secret="whsec_" + "A" * 44)
    try:
        # One failed attempt makes a delivery dead, so the test need not wait out retries.
        with holdfast_serve(card, env={"HOLDFAST_WEBHOOK_MAX_ATTEMPTS": "1"}) as server:
            yield Deployment(backend, server, endpoint, _viewer_key(server))
    finally:
        endpoint.close()
        os.environ.pop("HOLDFAST_TEST_POSTGRES", None)
        if saved is not None:
            os.environ["HOLDFAST_TEST_POSTGRES"] = saved


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        yield browser
        browser.close()


def shot(page: Page, d: Deployment, name: str) -> None:
    folder = SHOTS / d.backend
    folder.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(folder / f"{name}.png"), full_page=True)


def signed_in(browser: Browser, d: Deployment, key: str, **context_options: object) -> tuple[BrowserContext, Page]:
    context = browser.new_context(viewport={"width": 1280, "height": 900}, **context_options)
    page = context.new_page()
    page.goto(f"{d.server.url}/console")
    expect(page).to_have_url(re.compile(r"/console/login\?next="))
    page.get_by_label("API key").fill(key)
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_role("heading", level=1)).to_have_text("Overview")
    return context, page


def new_account(d: Deployment, amount: str) -> str:
    account = f"acct-{uuid.uuid4().hex[:10]}"
    with d.api(d.server.service_key) as api:
        assert api.put(f"/v1/accounts/{account}", json={"plan": "free"}).status_code in (200, 201)
        r = api.post(f"/v1/accounts/{account}/top-ups", json={"amount": amount, "idempotency_key": f"t-{account}"})
        assert r.status_code == 201, r.text
    return account


def balance(d: Deployment, account: str) -> str:
    with d.api(d.server.admin_key) as api:
        return api.get(f"/v1/accounts/{account}").json()["balance"]


def test_sign_in_by_keyboard_and_a_wrong_key(browser: Browser, deployment: Deployment) -> None:
    d = deployment
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.goto(f"{d.server.url}/console/login")
    page.keyboard.type("hf_" + "0" * 64)  # the key field has the focus
    page.keyboard.press("Enter")
    expect(page.get_by_role("alert")).to_contain_text("not a live API key")
    shot(page, d, "login-wrong-key")
    page.get_by_label("API key").fill(d.server.admin_key)
    page.keyboard.press("Enter")
    expect(page.get_by_role("heading", level=1)).to_have_text("Overview")
    # Tab from the top: the skip link, then the navigation, in order.
    page.keyboard.press("Tab")
    expect(page.locator(":focus")).to_have_text("Skip to content")
    page.keyboard.press("Tab")
    page.keyboard.press("Tab")
    expect(page.locator(":focus")).to_have_text("Overview")
    shot(page, d, "overview")
    cookies = context.cookies()
    assert [c["name"] for c in cookies] == ["holdfast_session"]
    assert cookies[0]["httpOnly"] and cookies[0]["sameSite"] == "Strict"
    assert d.server.admin_key not in cookies[0]["value"]
    context.close()


def test_find_an_account_after_a_top_up(browser: Browser, deployment: Deployment) -> None:
    d = deployment
    account = new_account(d, "25.00")
    context, page = signed_in(browser, d, d.server.admin_key)
    page.get_by_role("link", name="Accounts", exact=True).click()
    page.get_by_label("Id starts with").fill(account[:12])
    page.get_by_role("button", name="Find").click()
    shot(page, d, "accounts")
    page.get_by_role("link", name=account).click()
    expect(page.get_by_role("heading", level=1)).to_have_text(f"Account {account}")
    expect(page.locator("dl.facts")).to_contain_text("25.00")
    expect(page.locator("table.ledger")).to_contain_text("top_up")
    shot(page, d, "account")
    context.close()


def test_a_job_from_submit_to_complete_and_its_capture(browser: Browser, deployment: Deployment) -> None:
    d = deployment
    account = new_account(d, "5.00")
    with d.api(d.server.service_key) as service, d.api(d.server.worker_key) as worker:
        r = service.post("/v1/jobs", json={"account_id": account, "kind": "video", "idempotency_key": f"j-{account}"})
        assert r.status_code == 201, r.text
        job_id = r.json()["job_id"]
        lease = worker.post("/v1/lanes/video/lease", json={"worker_id": "render-7"}).json()
        assert lease["job"]["job_id"] == job_id
        r = worker.post(f"/v1/jobs/{job_id}/complete", json={"lease_token": lease["lease_token"]})
        assert r.status_code == 200, r.text
    context, page = signed_in(browser, d, d.server.admin_key)
    page.goto(f"{d.server.url}/console/jobs?lane=video&status=succeeded")
    shot(page, d, "jobs")
    page.get_by_role("link", name=job_id).first.click()
    timeline = page.locator("ol.timeline")
    expect(timeline).to_contain_text("Submitted")
    expect(timeline).to_contain_text("render-7")
    expect(timeline).to_contain_text("Finished: succeeded")
    ledger = page.locator("table.ledger")
    expect(ledger).to_contain_text("capture")
    expect(ledger).to_contain_text("-0.50")
    shot(page, d, "job")
    # The capture on the account's ledger links back to its job.
    page.get_by_role("link", name=account).first.click()
    expect(page.locator("table.ledger").get_by_role("link", name=job_id)).to_be_visible()
    context.close()


def test_block_and_unblock_with_confirmation(browser: Browser, deployment: Deployment) -> None:
    d = deployment
    account = new_account(d, "1.00")
    context, page = signed_in(browser, d, d.server.admin_key)
    page.goto(f"{d.server.url}/console/accounts/{account}")
    page.get_by_label("Reason").fill("chargeback dispute")
    page.get_by_role("button", name="Block…").click()
    expect(page.locator("p.confirm")).to_have_text(f"Block account {account} (chargeback dispute).")
    shot(page, d, "confirm")
    page.get_by_role("button", name="Confirm").click()
    expect(page.get_by_role("status")).to_have_text(f"Account {account} is blocked.")
    expect(page.locator("dl.facts")).to_contain_text("blocked")
    shot(page, d, "account-blocked")
    page.get_by_role("button", name="Unblock…").click()
    page.get_by_role("button", name="Confirm").click()
    expect(page.get_by_role("status")).to_have_text(f"Account {account} is not blocked.")
    with d.api(d.server.admin_key) as api:
        assert api.get(f"/v1/accounts/{account}").json()["blocked_at"] is None
        events = api.get("/v1/events", params={"account_id": account, "type": "operator.blocked"}).json()["events"]
        assert [e["data"]["reason"] for e in events] == ["chargeback dispute"]
    context.close()


def test_a_dead_delivery_redelivered_after_the_endpoint_is_back(browser: Browser, deployment: Deployment) -> None:
    d = deployment
    d.endpoint.healthy = False
    account = new_account(d, "2.00")
    with d.api(d.server.admin_key) as api:  # an event of this account for the endpoint
        assert api.post(f"/v1/accounts/{account}/block", json={"reason": "webhook test"}).status_code == 200
    context, page = signed_in(browser, d, d.server.admin_key)

    def dead_row_shown() -> bool:
        page.goto(f"{d.server.url}/console/webhooks")
        return page.locator("#dead ~ table").first.get_by_role("link", name=account).count() > 0

    wait_for("the failing delivery to show as dead", dead_row_shown, 30)
    shot(page, d, "webhooks-dead")
    d.endpoint.healthy = True
    before = len(d.endpoint.delivered)
    row = page.locator("#dead ~ table").first.locator("tr", has=page.get_by_role("link", name=account)).first
    row.get_by_role("button", name="Redeliver…").click()
    page.get_by_role("button", name="Confirm").click()
    expect(page.get_by_role("status")).to_contain_text("is queued for")
    wait_for("the redelivery to arrive", lambda: len(d.endpoint.delivered) > before, 30)
    page.goto(f"{d.server.url}/console/webhooks")
    shot(page, d, "webhooks-redelivered")
    context.close()


def test_a_viewer_sees_no_action_and_a_forged_post_changes_nothing(browser: Browser, deployment: Deployment) -> None:
    d = deployment
    account = new_account(d, "3.00")
    context, page = signed_in(browser, d, d.viewer_key)
    for path in ["/console", f"/console/accounts/{account}", "/console/webhooks", "/console/jobs"]:
        page.goto(f"{d.server.url}{path}")
        assert page.locator("main form[method=post]").count() == 0, f"{path} shows an action to a viewer"
    shot(page, d, "account-as-viewer")
    # A viewer's own form, token and all: refused.
    token = page.locator("input[name=csrf]").first.get_attribute("value") or ""
    r = context.request.post(
        f"{d.server.url}/console/accounts/{account}/credit",
        form={"csrf": token, "kind": "top_up", "amount": "100.00", "idempotency_key": "v-forge", "confirmed": "yes"},
    )
    assert r.status == 403
    context.close()

    # An admin's browser tricked into a POST without the token: refused too.
    context, page = signed_in(browser, d, d.server.admin_key)
    r = context.request.post(
        f"{d.server.url}/console/accounts/{account}/credit",
        form={"kind": "top_up", "amount": "100.00", "idempotency_key": "a-forge", "confirmed": "yes"},
    )
    assert r.status == 403
    assert "nothing was changed" in r.text()
    assert balance(d, account) == "3.00"
    context.close()


def test_a_statement_printed_to_one_page_with_its_totals(browser: Browser, deployment: Deployment) -> None:
    d = deployment
    account = new_account(d, "12.00")
    with d.api(d.server.service_key) as api:
        metered = {"usage": {"meter": "linux-small", "seconds": 600}, "idempotency_key": "m1"}
        assert api.post(f"/v1/accounts/{account}/debits", json=metered).status_code == 201
        debit = {"amount": "1.50", "idempotency_key": "d1"}
        assert api.post(f"/v1/accounts/{account}/debits", json=debit).status_code == 201
        statement = api.get(f"/v1/accounts/{account}/statement").json()
    assert statement["closing_balance"] == "10.44"
    context, page = signed_in(browser, d, d.viewer_key)
    page.goto(f"{d.server.url}/console/accounts/{account}")
    page.get_by_role("link", name="Statement of this month").click()
    expect(page.get_by_role("heading", level=1)).to_have_text(f"Statement of {account}")
    # Every day from long before the account to long after: the API's whole history.
    page.get_by_label("From").fill("2020-01-01")
    page.get_by_label("To").fill("2999-12-31")
    page.get_by_role("button", name="Show").click()
    figures = page.locator("table.statement")
    expect(figures).to_contain_text("Closing balance")
    expect(figures).to_contain_text(statement["closing_balance"])
    shot(page, d, "statement")
    pdf = pypdf.PdfReader(io.BytesIO(page.pdf(format="A4")))
    assert len(pdf.pages) == 1
    text = pdf.pages[0].extract_text()
    for figure in ["Opening balance", "0.00", "top_up", "12.00", "debit", "-1.56", "Closing balance", "10.44"]:
        assert figure in text, f"the printed statement lacks {figure!r}: {text}"
    for line in statement["spending_by_meter"]:
        assert line["amount"] in text
    assert "linux-small" in text and "600" in text
    # What is for the screen stays off the paper: navigation, the period's form.
    assert "Sign out" not in text and "Show" not in text
    # A day that is not one: the page says so, nothing else.
    page.goto(f"{d.server.url}/console/accounts/{account}/statement?from=2026-02-30")
    expect(page.get_by_role("main")).to_contain_text("from: must be a day")
    context.close()


def test_on_a_phone_and_without_javascript(browser: Browser, deployment: Deployment) -> None:
    d = deployment
    account = new_account(d, "4.00")
    context, page = signed_in(browser, d, d.server.admin_key, java_script_enabled=False)
    page.goto(f"{d.server.url}/console/accounts/{account}")
    expect(page.locator("dl.facts")).to_contain_text("4.00")
    page.set_viewport_size({"width": 390, "height": 844})
    for name, path in [("phone-overview", "/console"), ("phone-account", f"/console/accounts/{account}")]:
        page.goto(f"{d.server.url}{path}")
        expect(page.get_by_role("navigation", name="Console")).to_be_visible()
        shot(page, d, name)
    context.close()
    # Nothing is wider than the phone (measured with scripts on: the page itself has none).
    context, page = signed_in(browser, d, d.server.admin_key)
    page.set_viewport_size({"width": 390, "height": 844})
    page.goto(f"{d.server.url}/console/accounts/{account}")
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    context.close()
