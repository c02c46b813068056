from http import HTTPStatus
from typing import Any

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.complete_batch_request import CompleteBatchRequest
from ...models.error_body import ErrorBody
from ...models.job_batch_results import JobBatchResults
from ...types import Response


def _get_kwargs(
    *,
    body: CompleteBatchRequest,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/v1/jobs/complete",
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> ErrorBody | JobBatchResults | None:
    if response.status_code == 200:
        response_200 = JobBatchResults.from_dict(response.json())

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
) -> Response[ErrorBody | JobBatchResults]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: AuthenticatedClient,
    body: CompleteBatchRequest,
) -> Response[ErrorBody | JobBatchResults]:
    """Completes many jobs in one call, each as `POST /v1/jobs/{job_id}/complete`.

     The well-formed items are finished in one transaction when they can be (one commit for
    the batch); each still answers exactly as its single call would.

    Args:
        body (CompleteBatchRequest): `{"items": [...]}`: 1 to 100 jobs to complete.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ErrorBody | JobBatchResults]
    """

    kwargs = _get_kwargs(
        body=body,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    *,
    client: AuthenticatedClient,
    body: CompleteBatchRequest,
) -> ErrorBody | JobBatchResults | None:
    """Completes many jobs in one call, each as `POST /v1/jobs/{job_id}/complete`.

     The well-formed items are finished in one transaction when they can be (one commit for
    the batch); each still answers exactly as its single call would.

    Args:
        body (CompleteBatchRequest): `{"items": [...]}`: 1 to 100 jobs to complete.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ErrorBody | JobBatchResults
    """

    return sync_detailed(
        client=client,
        body=body,
    ).parsed


async def asyncio_detailed(
    *,
    client: AuthenticatedClient,
    body: CompleteBatchRequest,
) -> Response[ErrorBody | JobBatchResults]:
    """Completes many jobs in one call, each as `POST /v1/jobs/{job_id}/complete`.

     The well-formed items are finished in one transaction when they can be (one commit for
    the batch); each still answers exactly as its single call would.

    Args:
        body (CompleteBatchRequest): `{"items": [...]}`: 1 to 100 jobs to complete.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ErrorBody | JobBatchResults]
    """

    kwargs = _get_kwargs(
        body=body,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    *,
    client: AuthenticatedClient,
    body: CompleteBatchRequest,
) -> ErrorBody | JobBatchResults | None:
    """Completes many jobs in one call, each as `POST /v1/jobs/{job_id}/complete`.

     The well-formed items are finished in one transaction when they can be (one commit for
    the batch); each still answers exactly as its single call would.

    Args:
        body (CompleteBatchRequest): `{"items": [...]}`: 1 to 100 jobs to complete.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ErrorBody | JobBatchResults
    """

    return (
        await asyncio_detailed(
            client=client,
            body=body,
        )
    ).parsed
