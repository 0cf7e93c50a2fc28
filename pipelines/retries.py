"""Which source errors are worth a retry: connection failures and throttling, nothing else.

A retried conservation failure or bad manifest would fail the same way again and hide the
first error, so everything not listed here fails the step for good.
"""

from __future__ import annotations

import dagster as dg

TRANSIENT_AWS_CODES = {
    "Throttling", "ThrottlingException", "TooManyRequestsException", "RequestLimitExceeded", "SlowDown",
    "RequestTimeout", "RequestTimeoutException", "ServiceUnavailable", "InternalError", "503",
}
SOURCE_RETRY_POLICY = dg.RetryPolicy(max_retries=3, delay=60, backoff=dg.Backoff.EXPONENTIAL, jitter=dg.Jitter.PLUS_MINUS)


def is_transient(error: BaseException) -> bool:
    """True for errors a later attempt can get past: lost connections, timeouts, throttling."""
    from botocore.exceptions import ClientError, ConnectionError as BotoConnectionError, ReadTimeoutError
    from google.api_core import exceptions as google_errors

    if isinstance(error, (ConnectionError, TimeoutError, BotoConnectionError, ReadTimeoutError)):
        return True
    if isinstance(error, ClientError):
        return error.response.get("Error", {}).get("Code") in TRANSIENT_AWS_CODES
    return isinstance(
        error,
        (google_errors.TooManyRequests, google_errors.ServiceUnavailable, google_errors.InternalServerError,
         google_errors.GatewayTimeout, google_errors.DeadlineExceeded),
    )


def as_step_failure(error: Exception) -> Exception:
    """The error to raise from an asset: unchanged when transient (the retry policy retries
    it), else a `dg.Failure` that the retry policy leaves alone."""
    if is_transient(error):
        return error
    return dg.Failure(description=str(error), allow_retries=False)
