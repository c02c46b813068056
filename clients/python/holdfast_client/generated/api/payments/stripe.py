from http import HTTPStatus
from typing import Any

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.error_body import ErrorBody
from ...models.stripe_answer import StripeAnswer
from ...models.stripe_event import StripeEvent
from ...types import Response


def _get_kwargs(
    *,
    body: StripeEvent,
    stripe_signature: str,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}
    headers["Stripe-Signature"] = stripe_signature

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/v1/integrations/stripe",
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> ErrorBody | StripeAnswer | None:
    if response.status_code == 200:
        response_200 = StripeAnswer.from_dict(response.json())

        return response_200

    if response.status_code == 400:
        response_400 = ErrorBody.from_dict(response.json())

        return response_400

    if response.status_code == 404:
        response_404 = ErrorBody.from_dict(response.json())

        return response_404

    if response.status_code == 413:
        response_413 = ErrorBody.from_dict(response.json())

        return response_413

    if response.status_code == 503:
        response_503 = ErrorBody.from_dict(response.json())

        return response_503

    if client.raise_on_unexpected_status:
        raise errors.UnexpectedStatus(response.status_code, response.content)
    else:
        return None


def _build_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Response[ErrorBody | StripeAnswer]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: AuthenticatedClient | Client,
    body: StripeEvent,
    stripe_signature: str,
) -> Response[ErrorBody | StripeAnswer]:
    """Stripe's webhook: a checkout or payment tops the account up (once per payment),
    a refund refunds that top-up, a dispute blocks the account until won. Authenticated by
    `Stripe-Signature` alone (no API key); see docs/payments.md.

    Args:
        stripe_signature (str): `t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">`, as Stripe
            signs (several `v1` during a secret roll)
        body (StripeEvent): A Stripe event as Stripe sends it; the engine reads `type` and
            `data.object`.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ErrorBody | StripeAnswer]
    """

    kwargs = _get_kwargs(
        body=body,
        stripe_signature=stripe_signature,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    *,
    client: AuthenticatedClient | Client,
    body: StripeEvent,
    stripe_signature: str,
) -> ErrorBody | StripeAnswer | None:
    """Stripe's webhook: a checkout or payment tops the account up (once per payment),
    a refund refunds that top-up, a dispute blocks the account until won. Authenticated by
    `Stripe-Signature` alone (no API key); see docs/payments.md.

    Args:
        stripe_signature (str): `t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">`, as Stripe
            signs (several `v1` during a secret roll)
        body (StripeEvent): A Stripe event as Stripe sends it; the engine reads `type` and
            `data.object`.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ErrorBody | StripeAnswer
    """

    return sync_detailed(
        client=client,
        body=body,
        stripe_signature=stripe_signature,
    ).parsed


async def asyncio_detailed(
    *,
    client: AuthenticatedClient | Client,
    body: StripeEvent,
    stripe_signature: str,
) -> Response[ErrorBody | StripeAnswer]:
    """Stripe's webhook: a checkout or payment tops the account up (once per payment),
    a refund refunds that top-up, a dispute blocks the account until won. Authenticated by
    `Stripe-Signature` alone (no API key); see docs/payments.md.

    Args:
        stripe_signature (str): `t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">`, as Stripe
            signs (several `v1` during a secret roll)
        body (StripeEvent): A Stripe event as Stripe sends it; the engine reads `type` and
            `data.object`.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ErrorBody | StripeAnswer]
    """

    kwargs = _get_kwargs(
        body=body,
        stripe_signature=stripe_signature,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    *,
    client: AuthenticatedClient | Client,
    body: StripeEvent,
    stripe_signature: str,
) -> ErrorBody | StripeAnswer | None:
    """Stripe's webhook: a checkout or payment tops the account up (once per payment),
    a refund refunds that top-up, a dispute blocks the account until won. Authenticated by
    `Stripe-Signature` alone (no API key); see docs/payments.md.

    Args:
        stripe_signature (str): `t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">`, as Stripe
            signs (several `v1` during a secret roll)
        body (StripeEvent): A Stripe event as Stripe sends it; the engine reads `type` and
            `data.object`.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ErrorBody | StripeAnswer
    """

    return (
        await asyncio_detailed(
            client=client,
            body=body,
            stripe_signature=stripe_signature,
        )
    ).parsed
