import datetime
from http import HTTPStatus
from typing import Any

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.error_body import ErrorBody
from ...models.usage_body import UsageBody
from ...models.usage_group_by import UsageGroupBy
from ...types import UNSET, Response, Unset


def _get_kwargs(
    *,
    from_: datetime.datetime | Unset = UNSET,
    to: datetime.datetime | Unset = UNSET,
    group_by: UsageGroupBy | Unset = UNSET,
    account_id: str | Unset = UNSET,
    after: str | Unset = UNSET,
    limit: int | Unset = UNSET,
) -> dict[str, Any]:

    params: dict[str, Any] = {}

    json_from_: str | Unset = UNSET
    if not isinstance(from_, Unset):
        json_from_ = from_.isoformat()
    params["from"] = json_from_

    json_to: str | Unset = UNSET
    if not isinstance(to, Unset):
        json_to = to.isoformat()
    params["to"] = json_to

    json_group_by: str | Unset = UNSET
    if not isinstance(group_by, Unset):
        json_group_by = group_by

    params["group_by"] = json_group_by

    params["account_id"] = account_id

    params["after"] = after

    params["limit"] = limit

    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/v1/usage",
        "params": params,
    }

    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> ErrorBody | UsageBody | None:
    if response.status_code == 200:
        response_200 = UsageBody.from_dict(response.json())

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
) -> Response[ErrorBody | UsageBody]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: AuthenticatedClient,
    from_: datetime.datetime | Unset = UNSET,
    to: datetime.datetime | Unset = UNSET,
    group_by: UsageGroupBy | Unset = UNSET,
    account_id: str | Unset = UNSET,
    after: str | Unset = UNSET,
    limit: int | Unset = UNSET,
) -> Response[ErrorBody | UsageBody]:
    """What each account (`group_by=account`, by page in account id order), job kind
    (`group_by=kind`) or meter (`group_by=meter`) spent in `[from, to)`: debits and
    captures of money with the seconds of the metered ones, and what job refunds gave
    back; `account_id` narrows it to one account.

    Args:
        from_ (datetime.datetime | Unset): An RFC 3339 time, e.g. `2030-01-31T00:00:00Z`
        to (datetime.datetime | Unset): An RFC 3339 time, e.g. `2030-01-31T00:00:00Z`
        group_by (UsageGroupBy | Unset): What the report groups by
        account_id (str | Unset): An account id: 1–128 characters of A-Z a-z 0-9 . _ : -
        after (str | Unset): The `next` of the previous page: the last account id listed
        limit (int | Unset): Page size, 1–1000 (default 100)

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ErrorBody | UsageBody]
    """

    kwargs = _get_kwargs(
        from_=from_,
        to=to,
        group_by=group_by,
        account_id=account_id,
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
    from_: datetime.datetime | Unset = UNSET,
    to: datetime.datetime | Unset = UNSET,
    group_by: UsageGroupBy | Unset = UNSET,
    account_id: str | Unset = UNSET,
    after: str | Unset = UNSET,
    limit: int | Unset = UNSET,
) -> ErrorBody | UsageBody | None:
    """What each account (`group_by=account`, by page in account id order), job kind
    (`group_by=kind`) or meter (`group_by=meter`) spent in `[from, to)`: debits and
    captures of money with the seconds of the metered ones, and what job refunds gave
    back; `account_id` narrows it to one account.

    Args:
        from_ (datetime.datetime | Unset): An RFC 3339 time, e.g. `2030-01-31T00:00:00Z`
        to (datetime.datetime | Unset): An RFC 3339 time, e.g. `2030-01-31T00:00:00Z`
        group_by (UsageGroupBy | Unset): What the report groups by
        account_id (str | Unset): An account id: 1–128 characters of A-Z a-z 0-9 . _ : -
        after (str | Unset): The `next` of the previous page: the last account id listed
        limit (int | Unset): Page size, 1–1000 (default 100)

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ErrorBody | UsageBody
    """

    return sync_detailed(
        client=client,
        from_=from_,
        to=to,
        group_by=group_by,
        account_id=account_id,
        after=after,
        limit=limit,
    ).parsed


async def asyncio_detailed(
    *,
    client: AuthenticatedClient,
    from_: datetime.datetime | Unset = UNSET,
    to: datetime.datetime | Unset = UNSET,
    group_by: UsageGroupBy | Unset = UNSET,
    account_id: str | Unset = UNSET,
    after: str | Unset = UNSET,
    limit: int | Unset = UNSET,
) -> Response[ErrorBody | UsageBody]:
    """What each account (`group_by=account`, by page in account id order), job kind
    (`group_by=kind`) or meter (`group_by=meter`) spent in `[from, to)`: debits and
    captures of money with the seconds of the metered ones, and what job refunds gave
    back; `account_id` narrows it to one account.

    Args:
        from_ (datetime.datetime | Unset): An RFC 3339 time, e.g. `2030-01-31T00:00:00Z`
        to (datetime.datetime | Unset): An RFC 3339 time, e.g. `2030-01-31T00:00:00Z`
        group_by (UsageGroupBy | Unset): What the report groups by
        account_id (str | Unset): An account id: 1–128 characters of A-Z a-z 0-9 . _ : -
        after (str | Unset): The `next` of the previous page: the last account id listed
        limit (int | Unset): Page size, 1–1000 (default 100)

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ErrorBody | UsageBody]
    """

    kwargs = _get_kwargs(
        from_=from_,
        to=to,
        group_by=group_by,
        account_id=account_id,
        after=after,
        limit=limit,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    *,
    client: AuthenticatedClient,
    from_: datetime.datetime | Unset = UNSET,
    to: datetime.datetime | Unset = UNSET,
    group_by: UsageGroupBy | Unset = UNSET,
    account_id: str | Unset = UNSET,
    after: str | Unset = UNSET,
    limit: int | Unset = UNSET,
) -> ErrorBody | UsageBody | None:
    """What each account (`group_by=account`, by page in account id order), job kind
    (`group_by=kind`) or meter (`group_by=meter`) spent in `[from, to)`: debits and
    captures of money with the seconds of the metered ones, and what job refunds gave
    back; `account_id` narrows it to one account.

    Args:
        from_ (datetime.datetime | Unset): An RFC 3339 time, e.g. `2030-01-31T00:00:00Z`
        to (datetime.datetime | Unset): An RFC 3339 time, e.g. `2030-01-31T00:00:00Z`
        group_by (UsageGroupBy | Unset): What the report groups by
        account_id (str | Unset): An account id: 1–128 characters of A-Z a-z 0-9 . _ : -
        after (str | Unset): The `next` of the previous page: the last account id listed
        limit (int | Unset): Page size, 1–1000 (default 100)

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ErrorBody | UsageBody
    """

    return (
        await asyncio_detailed(
            client=client,
            from_=from_,
            to=to,
            group_by=group_by,
            account_id=account_id,
            after=after,
            limit=limit,
        )
    ).parsed
