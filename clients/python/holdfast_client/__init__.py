"""A Python client for the holdfast HTTP API (docs/API.md).

- `api`, `models`: generated from docs/openapi.json (see generate.sh); `api.<tag>.<name>`
  is one operation, e.g. `api.jobs.submit`;
- `Holdfast.call`: runs an operation with an idempotency key per logical call, retries
  and a `HoldfastError` for refusals;
- `Worker`: the lease / heartbeat / complete loop;
- `verify_webhook`: checks a webhook delivery and returns its event.
"""

import importlib
import pkgutil

from .client import Holdfast
from .errors import HoldfastError
from .generated import api, models
from .retry import RetryPolicy
from .webhooks import WebhookVerificationError, verify_webhook
from .worker import Lease, Outcome, Worker


def _import_operations() -> None:
    """Imports every generated operation module, so `api.jobs.submit` works after a bare
    `from holdfast_client import api` whatever operations the document has."""
    for found in pkgutil.walk_packages(api.__path__, prefix=f"{api.__name__}."):
        importlib.import_module(found.name)


_import_operations()

__all__ = [
    "Holdfast",
    "HoldfastError",
    "Lease",
    "Outcome",
    "RetryPolicy",
    "WebhookVerificationError",
    "Worker",
    "api",
    "models",
    "verify_webhook",
]
