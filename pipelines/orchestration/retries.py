"""Which source errors are worth a retry: connection failures and throttling, nothing else.

A retried conservation failure or bad manifest would fail the same way again and hide the
first error, so everything not listed here fails the step at once, with its own error. That is
why the raw loads request their retries (`dg.RetryRequested`) instead of carrying a
`dg.RetryPolicy`, which would retry every failure.
"""

from __future__ import annotations

import dagster as dg

TRANSIENT_AWS_CODES = {
    "Throttling",
    "ThrottlingException",
    "TooManyRequestsException",
    "RequestLimitExceeded",
    "SlowDown",
    "RequestTimeout",
    "RequestTimeoutException",
    "ServiceUnavailable",
    "InternalError",
    "503",
}
MAX_RETRIES = 3
FIRST_RETRY_DELAY_SECONDS = 60


def is_transient(error: BaseException) -> bool:
    """True for errors a later attempt can get past: lost connections, timeouts, throttling."""
    from botocore.exceptions import ClientError, ReadTimeoutError
    from botocore.exceptions import ConnectionError as BotoConnectionError
    from google.api_core import exceptions as google_errors

    if isinstance(error, (ConnectionError, TimeoutError, BotoConnectionError, ReadTimeoutError)):
        return True
    if isinstance(error, ClientError):
        return error.response.get("Error", {}).get("Code") in TRANSIENT_AWS_CODES
    return isinstance(
        error,
        (
            google_errors.TooManyRequests,
            google_errors.ServiceUnavailable,
            google_errors.InternalServerError,
            google_errors.GatewayTimeout,
            google_errors.DeadlineExceeded,
        ),
    )


def retry_request(error: Exception, retry_number: int) -> dg.RetryRequested | None:
    """A retry of the step after a transient error, waiting 60 s, 120 s, 240 s; None otherwise.

    Args:
        error: what the step raised.
        retry_number: how many times the step was retried already (`context.retry_number`).
    """
    if not is_transient(error):
        return None
    return dg.RetryRequested(max_retries=MAX_RETRIES, seconds_to_wait=FIRST_RETRY_DELAY_SECONDS * 2**retry_number)
