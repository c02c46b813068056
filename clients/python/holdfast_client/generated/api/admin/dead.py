from http import HTTPStatus
from typing import Any

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.dead_delivery_page import DeadDeliveryPage
from ...models.error_body import ErrorBody
from ...types import UNSET, Response, Unset


def _get_kwargs(
    *,
    endpoint: str | Unset = UNSET,
    after: str | Unset = UNSET,
    limit: int | Unset = UNSET,
) -> dict[str, Any]:

    params: dict[str, Any] = {}

    params["endpoint"] = endpoint

    params["after"] = after

    params["limit"] = limit

    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/v1/admin/webhooks/dead",
        "params": params,
    }

    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> DeadDeliveryPage | ErrorBody | None:
    if response.status_code == 200:
        response_200 = DeadDeliveryPage.from_dict(response.json())

        return response_200

    if response.status_code == 401:
        response_401 = ErrorBody.from_dict(response.json())

        return response_401

    if response.status_code == 403:
        response_403 = ErrorBody.from_dict(response.json())

        return response_403

    if response.status_code == 413:
        response_413 = ErrorBody.from_dict(response.json())

        return response_413

    if response.status_code == 422:
        response_422 = ErrorBody.from_dict(response.json())

        return response_422

    if response.status_code == 429:
        response_429 = ErrorBody.from_dict(response.json())

        return response_429

    if response.status_code == 503:
        response_503 = ErrorBody.from_dict(response.json())

        return response_503

    if client.raise_on_unexpected_status:
        raise errors.UnexpectedStatus(response.status_code, response.content)
    else:
        return None


def _build_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Response[DeadDeliveryPage | ErrorBody]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: AuthenticatedClient,
    endpoint: str | Unset = UNSET,
    after: str | Unset = UNSET,
    limit: int | Unset = UNSET,
) -> Response[DeadDeliveryPage | ErrorBody]:
    """Dead deliveries, oldest first. A viewer key sees each endpoint's URL without its
    query values (`?token=***`): only an admin, who may redeliver by URL, sees it whole.

    Args:
        endpoint (str | Unset): Only this webhook endpoint's (its URL)
        after (str | Unset): The `next` of the previous page (empty: the first page)
        limit (int | Unset): Page size, 1–1000 (default 100)

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[DeadDeliveryPage | ErrorBody]
    """

    kwargs = _get_kwargs(
        endpoint=endpoint,
        after=after,
        limit=limit,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    *,
    client: AuthenticatedClient,
    endpoint: str | Unset = UNSET,
    after: str | Unset = UNSET,
    limit: int | Unset = UNSET,
) -> DeadDeliveryPage | ErrorBody | None:
    """Dead deliveries, oldest first. A viewer key sees each endpoint's URL without its
    query values (`?token=***`): only an admin, who may redeliver by URL, sees it whole.

    Args:
        endpoint (str | Unset): Only this webhook endpoint's (its URL)
        after (str | Unset): The `next` of the previous page (empty: the first page)
        limit (int | Unset): Page size, 1–1000 (default 100)

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        DeadDeliveryPage | ErrorBody
    """

    return sync_detailed(
        client=client,
        endpoint=endpoint,
        after=after,
        limit=limit,
    ).parsed


async def asyncio_detailed(
    *,
    client: AuthenticatedClient,
    endpoint: str | Unset = UNSET,
    after: str | Unset = UNSET,
    limit: int | Unset = UNSET,
) -> Response[DeadDeliveryPage | ErrorBody]:
    """Dead deliveries, oldest first. A viewer key sees each endpoint's URL without its
    query values (`?token=***`): only an admin, who may redeliver by URL, sees it whole.

    Args:
        endpoint (str | Unset): Only this webhook endpoint's (its URL)
        after (str | Unset): The `next` of the previous page (empty: the first page)
        limit (int | Unset): Page size, 1–1000 (default 100)

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[DeadDeliveryPage | ErrorBody]
    """

    kwargs = _get_kwargs(
        endpoint=endpoint,
        after=after,
        limit=limit,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    *,
    client: AuthenticatedClient,
    endpoint: str | Unset = UNSET,
    after: str | Unset = UNSET,
    limit: int | Unset = UNSET,
) -> DeadDeliveryPage | ErrorBody | None:
    """Dead deliveries, oldest first. A viewer key sees each endpoint's URL without its
    query values (`?token=***`): only an admin, who may redeliver by URL, sees it whole.

    Args:
        endpoint (str | Unset): Only this webhook endpoint's (its URL)
        after (str | Unset): The `next` of the previous page (empty: the first page)
        limit (int | Unset): Page size, 1–1000 (default 100)

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        DeadDeliveryPage | ErrorBody
    """

    return (
        await asyncio_detailed(
            client=client,
            endpoint=endpoint,
            after=after,
            limit=limit,
        )
    ).parsed
