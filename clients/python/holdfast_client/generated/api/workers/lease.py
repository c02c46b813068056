from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.error_body import ErrorBody
from ...models.lease_batch_body import LeaseBatchBody
from ...models.lease_body import LeaseBody
from ...models.lease_request import LeaseRequest
from ...types import Response


def _get_kwargs(
    lane: str,
    *,
    body: LeaseRequest,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/v1/lanes/{lane}/lease".format(
            lane=quote(str(lane), safe=""),
        ),
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Any | ErrorBody | LeaseBatchBody | LeaseBody | None:
    if response.status_code == 200:

        def _parse_response_200(data: object) -> LeaseBatchBody | LeaseBody:
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                componentsschemas_lease_answer_type_0 = LeaseBody.from_dict(data)

                return componentsschemas_lease_answer_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            if not isinstance(data, dict):
                raise TypeError()
            componentsschemas_lease_answer_type_1 = LeaseBatchBody.from_dict(data)

            return componentsschemas_lease_answer_type_1

        response_200 = _parse_response_200(response.json())

        return response_200

    if response.status_code == 204:
        response_204 = cast(Any, None)
        return response_204

    if response.status_code == 401:
        response_401 = ErrorBody.from_dict(response.json())

        return response_401

    if response.status_code == 403:
        response_403 = ErrorBody.from_dict(response.json())

        return response_403

    if response.status_code == 404:
        response_404 = ErrorBody.from_dict(response.json())

        return response_404

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
) -> Response[Any | ErrorBody | LeaseBatchBody | LeaseBody]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    lane: str,
    *,
    client: AuthenticatedClient,
    body: LeaseRequest,
) -> Response[Any | ErrorBody | LeaseBatchBody | LeaseBody]:
    """Hands the oldest leasable job of a lane to a worker (or up to `max_jobs` of them),
    waiting up to `wait_ms`.

    Args:
        lane (str): A lane of the rate card in force: a kind's lane or its `_priority` twin (else
            404 `unknown_lane`)
        body (LeaseRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Any | ErrorBody | LeaseBatchBody | LeaseBody]
    """

    kwargs = _get_kwargs(
        lane=lane,
        body=body,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    lane: str,
    *,
    client: AuthenticatedClient,
    body: LeaseRequest,
) -> Any | ErrorBody | LeaseBatchBody | LeaseBody | None:
    """Hands the oldest leasable job of a lane to a worker (or up to `max_jobs` of them),
    waiting up to `wait_ms`.

    Args:
        lane (str): A lane of the rate card in force: a kind's lane or its `_priority` twin (else
            404 `unknown_lane`)
        body (LeaseRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Any | ErrorBody | LeaseBatchBody | LeaseBody
    """

    return sync_detailed(
        lane=lane,
        client=client,
        body=body,
    ).parsed


async def asyncio_detailed(
    lane: str,
    *,
    client: AuthenticatedClient,
    body: LeaseRequest,
) -> Response[Any | ErrorBody | LeaseBatchBody | LeaseBody]:
    """Hands the oldest leasable job of a lane to a worker (or up to `max_jobs` of them),
    waiting up to `wait_ms`.

    Args:
        lane (str): A lane of the rate card in force: a kind's lane or its `_priority` twin (else
            404 `unknown_lane`)
        body (LeaseRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Any | ErrorBody | LeaseBatchBody | LeaseBody]
    """

    kwargs = _get_kwargs(
        lane=lane,
        body=body,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    lane: str,
    *,
    client: AuthenticatedClient,
    body: LeaseRequest,
) -> Any | ErrorBody | LeaseBatchBody | LeaseBody | None:
    """Hands the oldest leasable job of a lane to a worker (or up to `max_jobs` of them),
    waiting up to `wait_ms`.

    Args:
        lane (str): A lane of the rate card in force: a kind's lane or its `_priority` twin (else
            404 `unknown_lane`)
        body (LeaseRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Any | ErrorBody | LeaseBatchBody | LeaseBody
    """

    return (
        await asyncio_detailed(
            lane=lane,
            client=client,
            body=body,
        )
    ).parsed
