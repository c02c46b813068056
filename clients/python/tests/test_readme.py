"""The README's quick start runs as written against a real server."""

from __future__ import annotations

import re
from pathlib import Path

from holdfast_server import Server

from holdfast_client import Holdfast, api

README = Path(__file__).resolve().parents[1] / "README.md"


def test_the_quick_start_runs_as_written(server: Server, service: Holdfast) -> None:
    quick_start = re.search(r"## Quick start\s+```python\n(.*?)```", README.read_text(), re.DOTALL).group(1)

    exec(quick_start.replace("http://127.0.0.1:8080", server.url), {"SERVICE_KEY": server.service_key})  # noqa: S102

    account = service.call(api.accounts.get_account, account_id="acme")
    assert (account.balance, account.held, account.open_jobs) == ("10.00", "0.50", 1)


ROOT_README = Path(__file__).resolve().parents[3] / "README.md"


def test_the_repository_readme_shows_the_client_in_five_lines(server: Server, service: Holdfast) -> None:
    snippet = re.search(r"## Clients.*?```python\n(.*?)```", ROOT_README.read_text(), re.DOTALL).group(1)
    lines = [
        line for line in snippet.splitlines() if line.strip() and not line.startswith(("from ", "import "))
    ]
    assert len(lines) == 5, lines

    exec(snippet.replace("http://127.0.0.1:8080", server.url), {"SERVICE_KEY": server.service_key})  # noqa: S102

    account = service.call(api.accounts.get_account, account_id="acme")
    assert (account.available, account.held) == ("9.50", "0.50")
