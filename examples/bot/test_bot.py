"""End to end: bot.py, as a user runs it, against a real `holdfast serve` with the bot's
rate card. The outcome is checked on the server, not only in what the bot printed."""

from __future__ import annotations

import base64
import os
import re
import secrets
import socket
import subprocess
import sys
from pathlib import Path

from holdfast_server import holdfast_serve

from holdfast_client import Holdfast, api

HERE = Path(__file__).resolve().parent


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_a_click_is_one_job_the_notice_arrives_verified_and_the_price_is_charged_once() -> None:
    listen = f"127.0.0.1:{free_port()}"
    card = (HERE / "rate-card.toml").read_text().replace("127.0.0.1:8765", listen)
    secret = "whsec_" + base64.b64encode(secrets.token_bytes(32)).decode()

    with holdfast_serve(card, env={"BOT_WEBHOOK_SECRET": secret}) as server:
        bot = subprocess.run(
            [
                sys.executable,
                str(HERE / "bot.py"),
                "--holdfast",
                server.url,
                "--listen",
                listen,
                "--timeout",
                "40",
            ],
            env={
                **os.environ,
                "HOLDFAST_SERVICE_KEY": server.service_key,
                "HOLDFAST_WORKER_KEY": server.worker_key,
                "BOT_WEBHOOK_SECRET": secret,
            },
            capture_output=True,
            text=True,
            timeout=90,
            check=False,
        )
        out = bot.stdout
        assert bot.returncode == 0, f"bot.py exited {bot.returncode}:\n{out}\n{bot.stderr}"
        admin = Holdfast(server.url, server.admin_key)

        job_ids = re.findall(r"click m-7 of 42: job (\S+)", out)
        assert len(job_ids) == 2 and job_ids[0] == job_ids[1]  # the same click: one job
        job_id = job_ids[0]
        job = admin.call(api.jobs.get_job, job_id=job_id)
        assert job.status == "succeeded"
        assert [(line.pocket, line.amount) for line in job.charged] == [("money", "0.25")]

        money = [
            (e.kind, e.delta, e.ref)
            for e in admin.call(api.money.account_ledger, account_id="tg:42").entries
            if e.pocket == "money"
        ]
        assert money == [("top_up", "1.00", None), ("capture", "-0.25", job_id)]  # charged once
        account = admin.call(api.accounts.get_account, account_id="tg:42")
        assert (account.balance, account.held, account.open_jobs) == ("0.75", "0.00", 0)

        notices = admin.call(api.events.list_events, account_id="tg:42", type_="job.waiting").events
        assert [(n.job_id, n.data["status"]) for n in notices] == [(job_id, "in_progress")]
        assert f"webhook {notices[0].event_id} job.waiting verified" in out
        assert "[bot -> 42] You are in the queue" in out
        assert "webhook refused" not in out
        assert "[bot -> 42] Your balance is now 0.75." in out
