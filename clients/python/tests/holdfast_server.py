"""A real `holdfast serve` for tests: a fresh database, a rate card, keys, a free port.

The binary is $HOLDFAST_BIN (default $REPO/target/release/holdfast). The database is a
new SQLite file in a temporary directory, or, when HOLDFAST_TEST_POSTGRES is set
(`postgres://postgres@127.0.0.1:5432`), a new PostgreSQL database with a random name,
dropped afterwards. The examples' tests use this module too.
"""

from __future__ import annotations

import contextlib
import os
import re
import secrets
import signal
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

REPO = Path(__file__).resolve().parents[3]
HOLDFAST_BIN = os.environ.get("HOLDFAST_BIN", str(REPO / "target/release/holdfast"))
START_TIMEOUT_SECONDS = 30.0


@dataclass(frozen=True)
class Server:
    """A running server: its URL and one key of each role."""

    url: str
    admin_key: str
    service_key: str
    worker_key: str
    database_url: str
    log_path: Path

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")


def wait_for(what: str, check: Callable[[], Any], timeout_seconds: float = 10.0) -> Any:
    """Polls `check` until it returns something truthy; fails the test after the deadline."""
    deadline = time.monotonic() + timeout_seconds
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout_seconds} s waiting for {what}")
        time.sleep(0.05)


@contextlib.contextmanager
def holdfast_serve(rate_card: str, env: dict[str, str] | None = None) -> Iterator[Server]:
    """Starts `holdfast serve` with this rate card (TOML text) and stops it (SIGTERM)."""
    with tempfile.TemporaryDirectory(prefix="holdfast-test-") as tmp, _database(tmp) as database:
        card = Path(tmp, "rate-card.toml")
        card.write_text(rate_card)
        common = ["--database", database, "--rate-card", str(card)]
        _holdfast("migrate", *common)  # only migrate and serve create the schema
        service_key = _create_key("service", common)
        worker_key = _create_key("worker", common)
        admin_key = "hf_" + secrets.token_hex(32)
        log_path = Path(tmp, "serve.log")
        with _serve(common, admin_key, log_path, env or {}) as url:
            yield Server(url, admin_key, service_key, worker_key, database, log_path)


def _create_key(role: str, common: list[str]) -> str:
    return _holdfast("key", "create", "--role", role, *common)


def _holdfast(*args: str) -> str:
    """Runs an operator command; its stdout, stripped."""
    done = subprocess.run(
        [HOLDFAST_BIN, *args],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    if done.returncode != 0:
        raise AssertionError(f"holdfast {' '.join(args)} exited {done.returncode}: {done.stderr}")
    return done.stdout.strip()


@contextlib.contextmanager
def _serve(common: list[str], admin_key: str, log_path: Path, env: dict[str, str]) -> Iterator[str]:
    """Runs serve on a free port (it binds port 0 and logs the address it got)."""
    full_env = {**os.environ, **env, "HOLDFAST_ADMIN_KEY": admin_key, "RUST_LOG": "info"}
    with open(log_path, "wb") as log:
        process = subprocess.Popen(
            [HOLDFAST_BIN, "serve", "--listen", "127.0.0.1:0", *common],
            stdout=log,
            stderr=subprocess.STDOUT,
            env=full_env,
        )
    try:
        url = _wait_until_healthy(process, log_path)
        yield url
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _wait_until_healthy(process: subprocess.Popen[bytes], log_path: Path) -> str:
    def healthy_url() -> str | None:
        if process.poll() is not None:
            raise AssertionError(f"holdfast serve exited {process.returncode}:\n{log_path.read_text()}")
        found = re.search(r"listening on (\S+)", log_path.read_text(errors="replace"))
        if not found:
            return None
        url = f"http://{found.group(1)}"
        try:
            return url if httpx.get(f"{url}/healthz", timeout=2).status_code == 200 else None
        except httpx.TransportError:
            return None

    return wait_for("holdfast serve to answer /healthz", healthy_url, START_TIMEOUT_SECONDS)


@contextlib.contextmanager
def _database(tmp: str) -> Iterator[str]:
    """A fresh SQLite file, or a fresh PostgreSQL database when HOLDFAST_TEST_POSTGRES is set."""
    postgres = os.environ.get("HOLDFAST_TEST_POSTGRES")
    if not postgres:
        yield f"sqlite://{tmp}/holdfast.db"
        return
    name = "hf_client_" + secrets.token_hex(6)
    _psql(postgres, f"CREATE DATABASE {name}")
    try:
        yield f"{postgres.rstrip('/')}/{name}"
    finally:
        _psql(postgres, f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


def _psql(server_url: str, sql: str) -> None:
    subprocess.run(
        ["psql", f"{server_url.rstrip('/')}/postgres", "-v", "ON_ERROR_STOP=1", "-qc", sql],
        check=True,
        capture_output=True,
        timeout=60,
    )
