from http import HTTPStatus
from typing import Any

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.error_body import ErrorBody
from ...models.event_page import EventPage
from ...models.list_events_type import ListEventsType
from ...types import UNSET, Response, Unset


def _get_kwargs(
    *,
    after: str | Unset = UNSET,
    limit: int | Unset = UNSET,
    account_id: str | Unset = UNSET,
    type_: ListEventsType | Unset = UNSET,
    actor: str | Unset = UNSET,
) -> dict[str, Any]:

    params: dict[str, Any] = {}

    params["after"] = after

    params["limit"] = limit

    params["account_id"] = account_id

    json_type_: str | Unset = UNSET
    if not isinstance(type_, Unset):
        json_type_ = type_

    params["type"] = json_type_

    params["actor"] = actor

    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/v1/events",
        "params": params,
    }

    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> ErrorBody | EventPage | None:
    if response.status_code == 200:
        response_200 = EventPage.from_dict(response.json())

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
) -> Response[ErrorBody | EventPage]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: AuthenticatedClient,
    after: str | Unset = UNSET,
    limit: int | Unset = UNSET,
    account_id: str | Unset = UNSET,
    type_: ListEventsType | Unset = UNSET,
    actor: str | Unset = UNSET,
) -> Response[ErrorBody | EventPage]:
    """Events after the cursor, in the one order every reader sees.

    Args:
        after (str | Unset): The `next` of the previous page (empty: the first page)
        limit (int | Unset): Page size, 1–1000 (default 100)
        account_id (str | Unset): An account id: 1–128 characters of A-Z a-z 0-9 . _ : -
        type_ (ListEventsType | Unset): Only events of this type
        actor (str | Unset): Only events this actor caused: `key:<key id>`, `cli:<user>`,
            `system:<pass>`, `integration:stripe`, `serve:first-admin-key`, `library`

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ErrorBody | EventPage]
    """

    kwargs = _get_kwargs(
        after=after,
        limit=limit,
        account_id=account_id,
        type_=type_,
        actor=actor,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    *,
    client: AuthenticatedClient,
    after: str | Unset = UNSET,
    limit: int | Unset = UNSET,
    account_id: str | Unset = UNSET,
    type_: ListEventsType | Unset = UNSET,
    actor: str | Unset = UNSET,
) -> ErrorBody | EventPage | None:
    """Events after the cursor, in the one order every reader sees.

    Args:
        after (str | Unset): The `next` of the previous page (empty: the first page)
        limit (int | Unset): Page size, 1–1000 (default 100)
        account_id (str | Unset): An account id: 1–128 characters of A-Z a-z 0-9 . _ : -
        type_ (ListEventsType | Unset): Only events of this type
        actor (str | Unset): Only events this actor caused: `key:<key id>`, `cli:<user>`,
            `system:<pass>`, `integration:stripe`, `serve:first-admin-key`, `library`

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ErrorBody | EventPage
    """

    return sync_detailed(
        client=client,
        after=after,
        limit=limit,
        account_id=account_id,
        type_=type_,
        actor=actor,
    ).parsed


async def asyncio_detailed(
    *,
    client: AuthenticatedClient,
    after: str | Unset = UNSET,
    limit: int | Unset = UNSET,
    account_id: str | Unset = UNSET,
    type_: ListEventsType | Unset = UNSET,
    actor: str | Unset = UNSET,
) -> Response[ErrorBody | EventPage]:
    """Events after the cursor, in the one order every reader sees.

    Args:
        after (str | Unset): The `next` of the previous page (empty: the first page)
        limit (int | Unset): Page size, 1–1000 (default 100)
        account_id (str | Unset): An account id: 1–128 characters of A-Z a-z 0-9 . _ : -
        type_ (ListEventsType | Unset): Only events of this type
        actor (str | Unset): Only events this actor caused: `key:<key id>`, `cli:<user>`,
            `system:<pass>`, `integration:stripe`, `serve:first-admin-key`, `library`

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ErrorBody | EventPage]
    """

    kwargs = _get_kwargs(
        after=after,
        limit=limit,
        account_id=account_id,
        type_=type_,
        actor=actor,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    *,
    client: AuthenticatedClient,
    after: str | Unset = UNSET,
    limit: int | Unset = UNSET,
    account_id: str | Unset = UNSET,
    type_: ListEventsType | Unset = UNSET,
    actor: str | Unset = UNSET,
) -> ErrorBody | EventPage | None:
    """Events after the cursor, in the one order every reader sees.

    Args:
        after (str | Unset): The `next` of the previous page (empty: the first page)
        limit (int | Unset): Page size, 1–1000 (default 100)
        account_id (str | Unset): An account id: 1–128 characters of A-Z a-z 0-9 . _ : -
        type_ (ListEventsType | Unset): Only events of this type
        actor (str | Unset): Only events this actor caused: `key:<key id>`, `cli:<user>`,
            `system:<pass>`, `integration:stripe`, `serve:first-admin-key`, `library`

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ErrorBody | EventPage
    """

    return (
        await asyncio_detailed(
            client=client,
            after=after,
            limit=limit,
            account_id=account_id,
            type_=type_,
            actor=actor,
        )
    ).parsed
