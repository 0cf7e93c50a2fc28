"""POSTs a JSON body to a webhook URL: a Slack incoming webhook or any generic one."""

from __future__ import annotations

import http.client
import json
import socket
import ssl
import urllib.error
import urllib.request
from collections.abc import Callable
from urllib.parse import urljoin, urlsplit

from connectors.notify.deadline import Deadline
from connectors.notify.errors import DeliveryError
from connectors.notify.settings import RETRYABLE_HTTP_STATUSES, USER_AGENT


class _RefuseRedirects(urllib.request.HTTPRedirectHandler):
    """Answers a redirect with its HTTP error: urllib would follow a 302 or 303 as a GET
    without the body, to whatever host it names, and the answer there would count as
    delivered."""

    def redirect_request(self, *args: object, **kwargs: object) -> None:
        return None


def _watched(connection: type[http.client.HTTPConnection], deadline: Deadline) -> Callable[..., object]:
    """A factory of `connection`s whose socket (the plain one, before any TLS) `deadline`
    cuts."""

    def connect(*args: object, **kwargs: object) -> http.client.HTTPConnection:
        made = connection(*args, **kwargs)
        # the one place http.client opens the socket (also to a proxy, before TLS)
        made._create_connection = lambda *where: deadline.watch(socket.create_connection(*where))
        return made

    return connect


class _HttpHandler(urllib.request.HTTPHandler):
    def __init__(self, deadline: Deadline) -> None:
        super().__init__()
        self._deadline = deadline

    def http_open(self, request: urllib.request.Request) -> http.client.HTTPResponse:
        return self.do_open(_watched(http.client.HTTPConnection, self._deadline), request)


class _HttpsHandler(urllib.request.HTTPSHandler):
    def __init__(self, deadline: Deadline) -> None:
        super().__init__()
        self._deadline = deadline

    def https_open(self, request: urllib.request.Request) -> http.client.HTTPResponse:
        return self.do_open(
            _watched(http.client.HTTPSConnection, self._deadline), request, context=ssl.create_default_context()
        )


def _http_error(url: str, error: urllib.error.HTTPError) -> DeliveryError:
    if 300 <= error.code < 400:
        target = urlsplit(urljoin(url, error.headers.get("Location", "")))
        where = target.hostname or "nowhere"
        where += f":{target.port}" if target.port else ""
        return DeliveryError(
            f"HTTP {error.code} {error.reason}: the webhook redirects to {where}, and an alert is never sent "
            "on to another address; set the URL the redirect leads to",
            retryable=False,
        )
    return DeliveryError(f"HTTP {error.code} {error.reason}", retryable=error.code in RETRYABLE_HTTP_STATUSES)


def post_json(url: str, body: dict[str, object], timeout: float) -> None:
    """POSTs `body` as JSON to `url` once, following no redirect.

    Args:
        url: an http:// or https:// URL.
        body: the JSON object sent.
        timeout: seconds the whole send may take, from connecting to the end of the answer.

    Raises:
        DeliveryError: not an http(s) URL, a redirect (naming its status and the host it leads
            to), an HTTP error answer (retryable for the statuses of RETRYABLE_HTTP_STATUSES),
            no connection or no complete answer within `timeout` (retryable).
    """
    if urlsplit(url).scheme not in ("http", "https"):
        raise DeliveryError("the URL is not an http:// or https:// URL", retryable=False)
    request = urllib.request.Request(
        url,
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json", "User-Agent": USER_AGENT},
        method="POST",
    )
    with Deadline(timeout) as deadline:
        opener = urllib.request.build_opener(_RefuseRedirects, _HttpHandler(deadline), _HttpsHandler(deadline))
        try:
            with opener.open(request, timeout=timeout) as response:
                response.read()
        except urllib.error.HTTPError as error:
            deadline.check()
            raise _http_error(url, error) from None
        except (urllib.error.URLError, http.client.HTTPException, OSError) as error:
            deadline.check()
            reason = getattr(error, "reason", error)
            raise DeliveryError(f"cannot reach the server: {reason}", retryable=True) from None
        deadline.check()
