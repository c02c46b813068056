"""A chat-bot backend that sells image generations, billed by holdfast.

The pieces a real bot has, with the messenger replaced by printing (`Chat`):
- `Bot.on_generate_click`: a user's "generate" click submits a job. The idempotency key is
  the click itself (chat and message id), so the same click delivered twice — a double
  tap, the messenger's own retry — is one job and one hold;
- `generate_image`: the worker's handler. `Worker` (holdfast_client) leases from the
  `image` lane, heartbeats in the background while it runs, and completes it, which
  captures the price;
- `Receiver`: the webhook endpoint. It verifies each delivery (Standard Webhooks), skips
  ones it has seen (by `webhook-id`), and tells the user "you are in the queue" when
  holdfast sends `job.waiting`, or "not charged" when a job failed.

`python bot.py` runs all three and plays one user's conversation (see README.md).
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from holdfast_client import (
    Holdfast,
    HoldfastError,
    Lease,
    WebhookVerificationError,
    Worker,
    api,
    verify_webhook,
)
from holdfast_client.generated.models import EventBody

GENERATION_SECONDS = 4.0  # longer than the card's notice_delay_seconds: the notice shows


class Chat:
    """Stands in for the messenger: what the bot says to a user, printed and kept."""

    def __init__(self) -> None:
        self.said: list[tuple[str, str]] = []
        self._lock = threading.Lock()

    def send(self, user: str, text: str) -> None:
        with self._lock:
            self.said.append((user, text))
        print(f"[bot -> {user}] {text}", flush=True)

    def sent_to(self, user: str, starting: str) -> bool:
        with self._lock:
            return any(u == user and text.startswith(starting) for u, text in self.said)


def account_of(user: str) -> str:
    return f"tg:{user}"


class Bot:
    """The bot's commands, each one call to holdfast with the service key."""

    def __init__(self, holdfast: Holdfast, chat: Chat) -> None:
        self.holdfast = holdfast
        self.chat = chat

    def on_start(self, user: str) -> None:
        self.holdfast.call(api.accounts.put_account, account_id=account_of(user), plan="free")
        self.chat.send(user, "Welcome! An image costs 0.25.")

    def on_payment(self, user: str, payment_id: str, amount: str) -> None:
        """A payment provider's callback: the payment id is the key, so its retries add nothing."""
        result = self.holdfast.call(
            api.money.top_up,
            account_id=account_of(user),
            amount=amount,
            idempotency_key=f"payment:{payment_id}",
        )
        self.chat.send(user, f"Thanks! Your balance is {result.account.balance}.")

    def on_generate_click(self, user: str, message_id: str, prompt: str) -> str | None:
        """Submits the generation; the same click (user, message id) is always the same job."""
        try:
            job = self.holdfast.call(
                api.jobs.submit,
                account_id=account_of(user),
                kind="image",
                payload={"prompt": prompt, "user": user},
                idempotency_key=f"click:{user}:{message_id}",
            )
        except HoldfastError as refused:
            self.chat.send(user, REFUSALS.get(refused.code, "Sorry, that did not work."))
            return None
        print(f"click {message_id} of {user}: job {job.job_id} ({job.status})", flush=True)
        return job.job_id

    def on_event(self, event: EventBody) -> None:
        """A verified webhook event."""
        user = event.account_id.removeprefix("tg:")
        if event.type_ == "job.waiting":
            self.chat.send(user, "You are in the queue: your image is on its way.")
        elif event.type_ in ("job.failed", "job.expired"):
            self.chat.send(user, "Sorry, that image did not work out. You were not charged.")


REFUSALS = {
    "insufficient_funds": "Your balance is too low for an image: top up first.",
    "busy": "One image at a time, please: the last one is still being made.",
    "account_blocked": "Your account is blocked.",
}


def image_worker(holdfast: Holdfast, chat: Chat) -> Worker:
    """The worker of the `image` lane; its handler makes the picture and sends it."""

    def generate_image(lease: Lease) -> list[dict[str, str]] | None:
        deadline = time.monotonic() + GENERATION_SECONDS
        while time.monotonic() < deadline:  # stands in for the model, checking for a cancel
            if lease.should_stop():
                return []  # canceled before the picture was made: capture nothing
            time.sleep(0.1)
        payload = lease.job.payload
        chat.send(
            payload["user"],
            f"Here is your image of {payload['prompt']!r}: https://img.example/{lease.job.job_id}.png",
        )
        # returning None captures the whole hold: the price of the kind

    return Worker(holdfast, "image", generate_image, worker_id="bot-worker-1", lease_seconds=10, wait_ms=2000)


class Receiver:
    """The bot's webhook endpoint: verify, de-duplicate, answer 2xx at once, act."""

    def __init__(self, listen: str, secret: str, bot: Bot) -> None:
        host, port = listen.rsplit(":", 1)
        self.secret = secret
        self.bot = bot
        self.seen: set[str] = set()  # a unique key in the bot's database, in production
        self._lock = threading.Lock()
        self.server = ThreadingHTTPServer((host, int(port)), self._handler_class())

    def first_time(self, webhook_id: str) -> bool:
        with self._lock:
            new = webhook_id not in self.seen
            self.seen.add(webhook_id)
            return new

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                try:
                    event = verify_webhook(body, self.headers, receiver.secret)
                except WebhookVerificationError as bad:
                    print(f"webhook refused: {bad}", flush=True)
                    self.send_response(400)
                    self.end_headers()
                    return
                self.send_response(204)
                self.end_headers()
                if receiver.first_time(self.headers["webhook-id"]):
                    print(f"webhook {event.event_id} {event.type_} verified", flush=True)
                    receiver.bot.on_event(event)

            def log_message(self, *_args: object) -> None:
                pass

        return Handler


def play_conversation(bot: Bot, chat: Chat, timeout_seconds: float) -> bool:
    """One user: starts, pays 1.00, clicks "generate" — twice, the same click — and waits
    for the notice, the image and the job's end. True when all came and it succeeded."""
    user = "42"
    bot.on_start(user)
    bot.on_payment(user, payment_id="pay-1", amount="1.00")
    first = bot.on_generate_click(user, message_id="m-7", prompt="a lighthouse at dusk")
    second = bot.on_generate_click(user, message_id="m-7", prompt="a lighthouse at dusk")
    print(f"same click twice -> one job: {first is not None and first == second}", flush=True)
    if first is None or first != second:
        return False
    deadline = time.monotonic() + timeout_seconds
    while time.monotonic() < deadline:
        job = bot.holdfast.call(api.jobs.get_job, job_id=first)
        if job.status in ("succeeded", "failed", "expired") and chat.sent_to(user, "You are in the queue"):
            account = bot.holdfast.call(api.accounts.get_account, account_id=account_of(user))
            chat.send(user, f"Your balance is now {account.balance}.")
            return job.status == "succeeded"
        time.sleep(0.2)
    return False


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--holdfast", default="http://127.0.0.1:8080", help="holdfast serve's URL")
    parser.add_argument("--listen", default="127.0.0.1:8765", help="where the webhook receiver listens")
    parser.add_argument("--timeout", type=float, default=60, help="seconds to wait for the image")
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)

    chat = Chat()
    bot = Bot(Holdfast(args.holdfast, os.environ["HOLDFAST_SERVICE_KEY"]), chat)
    receiver = Receiver(args.listen, os.environ["BOT_WEBHOOK_SECRET"], bot)
    worker = image_worker(Holdfast(args.holdfast, os.environ["HOLDFAST_WORKER_KEY"]), chat)
    stop = threading.Event()
    threads = [
        threading.Thread(target=receiver.server.serve_forever, daemon=True),
        threading.Thread(target=worker.run, args=(stop,), daemon=True),
    ]
    for thread in threads:
        thread.start()
    try:
        ok = play_conversation(bot, chat, args.timeout)
    finally:
        stop.set()
        threads[1].join(timeout=10)
        receiver.server.shutdown()
    print("conversation complete" if ok else "conversation did NOT complete", flush=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
