from http import HTTPStatus
from typing import Any

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.account_page_body import AccountPageBody
from ...models.error_body import ErrorBody
from ...models.list_accounts_status import (
    ListAccountsStatus,
)
from ...types import UNSET, Response, Unset


def _get_kwargs(
    *,
    prefix: str | Unset = UNSET,
    plan: str | Unset = UNSET,
    status: ListAccountsStatus | Unset = UNSET,
    after: str | Unset = UNSET,
    limit: int | Unset = UNSET,
) -> dict[str, Any]:

    params: dict[str, Any] = {}

    params["prefix"] = prefix

    params["plan"] = plan

    json_status: str | Unset = UNSET
    if not isinstance(status, Unset):
        json_status = status

    params["status"] = json_status

    params["after"] = after

    params["limit"] = limit

    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/v1/accounts",
        "params": params,
    }

    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> AccountPageBody | ErrorBody | None:
    if response.status_code == 200:
        response_200 = AccountPageBody.from_dict(response.json())

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
) -> Response[AccountPageBody | ErrorBody]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: AuthenticatedClient,
    prefix: str | Unset = UNSET,
    plan: str | Unset = UNSET,
    status: ListAccountsStatus | Unset = UNSET,
    after: str | Unset = UNSET,
    limit: int | Unset = UNSET,
) -> Response[AccountPageBody | ErrorBody]:
    """Accounts in id order, by id prefix, plan and status.

    Args:
        prefix (str | Unset): Only account ids that start with this
        plan (str | Unset): A plan of the rate card in force (else 422 `unknown_plan`)
        status (ListAccountsStatus | Unset): Only accounts in this state
        after (str | Unset): The `next` of the previous page: the last account id listed
        limit (int | Unset): Page size, 1–1000 (default 100)

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[AccountPageBody | ErrorBody]
    """

    kwargs = _get_kwargs(
        prefix=prefix,
        plan=plan,
        status=status,
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
    prefix: str | Unset = UNSET,
    plan: str | Unset = UNSET,
    status: ListAccountsStatus | Unset = UNSET,
    after: str | Unset = UNSET,
    limit: int | Unset = UNSET,
) -> AccountPageBody | ErrorBody | None:
    """Accounts in id order, by id prefix, plan and status.

    Args:
        prefix (str | Unset): Only account ids that start with this
        plan (str | Unset): A plan of the rate card in force (else 422 `unknown_plan`)
        status (ListAccountsStatus | Unset): Only accounts in this state
        after (str | Unset): The `next` of the previous page: the last account id listed
        limit (int | Unset): Page size, 1–1000 (default 100)

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        AccountPageBody | ErrorBody
    """

    return sync_detailed(
        client=client,
        prefix=prefix,
        plan=plan,
        status=status,
        after=after,
        limit=limit,
    ).parsed


async def asyncio_detailed(
    *,
    client: AuthenticatedClient,
    prefix: str | Unset = UNSET,
    plan: str | Unset = UNSET,
    status: ListAccountsStatus | Unset = UNSET,
    after: str | Unset = UNSET,
    limit: int | Unset = UNSET,
) -> Response[AccountPageBody | ErrorBody]:
    """Accounts in id order, by id prefix, plan and status.

    Args:
        prefix (str | Unset): Only account ids that start with this
        plan (str | Unset): A plan of the rate card in force (else 422 `unknown_plan`)
        status (ListAccountsStatus | Unset): Only accounts in this state
        after (str | Unset): The `next` of the previous page: the last account id listed
        limit (int | Unset): Page size, 1–1000 (default 100)

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[AccountPageBody | ErrorBody]
    """

    kwargs = _get_kwargs(
        prefix=prefix,
        plan=plan,
        status=status,
        after=after,
        limit=limit,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    *,
    client: AuthenticatedClient,
    prefix: str | Unset = UNSET,
    plan: str | Unset = UNSET,
    status: ListAccountsStatus | Unset = UNSET,
    after: str | Unset = UNSET,
    limit: int | Unset = UNSET,
) -> AccountPageBody | ErrorBody | None:
    """Accounts in id order, by id prefix, plan and status.

    Args:
        prefix (str | Unset): Only account ids that start with this
        plan (str | Unset): A plan of the rate card in force (else 422 `unknown_plan`)
        status (ListAccountsStatus | Unset): Only accounts in this state
        after (str | Unset): The `next` of the previous page: the last account id listed
        limit (int | Unset): Page size, 1–1000 (default 100)

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        AccountPageBody | ErrorBody
    """

    return (
        await asyncio_detailed(
            client=client,
            prefix=prefix,
            plan=plan,
            status=status,
            after=after,
            limit=limit,
        )
    ).parsed
