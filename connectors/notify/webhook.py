"""POSTs a JSON body to a webhook URL: a Slack incoming webhook or any generic one."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from urllib.parse import urlsplit

from connectors.notify.errors import DeliveryError
from connectors.notify.settings import RETRYABLE_HTTP_STATUSES, USER_AGENT


def post_json(url: str, body: dict[str, object], timeout: float) -> None:
    """POSTs `body` as JSON to `url` once.

    Args:
        url: an http:// or https:// URL.
        body: the JSON object sent.
        timeout: seconds to wait for the connection and the answer.

    Raises:
        DeliveryError: not an http(s) URL, an HTTP error answer (retryable for the statuses of
            RETRYABLE_HTTP_STATUSES) or no connection (retryable).
    """
    if urlsplit(url).scheme not in ("http", "https"):
        raise DeliveryError("the URL is not an http:// or https:// URL", retryable=False)
    request = urllib.request.Request(
        url,
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json", "User-Agent": USER_AGENT},
        method="POST",
    )
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            response.read()
    except urllib.error.HTTPError as error:
        raise DeliveryError(
            f"HTTP {error.code} {error.reason}", retryable=error.code in RETRYABLE_HTTP_STATUSES
        ) from None
    except (urllib.error.URLError, OSError) as error:
        reason = getattr(error, "reason", error)
        raise DeliveryError(f"cannot reach the server: {reason}", retryable=True) from None
