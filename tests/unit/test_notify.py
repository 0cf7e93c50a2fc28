"""The notification senders' errors: what another attempt may fix, a redirect never followed, and
a send's deadline, against real local servers."""

from __future__ import annotations

import socket
from urllib.parse import urlsplit

import pytest

from connectors.notify.errors import DeliveryError
from connectors.notify.smtp import Mail, send_mail
from connectors.notify.webhook import post_json
from tests.support.alert_servers import http_recorder, trickling_server


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_a_webhook_url_that_is_not_http_is_refused_for_good() -> None:
    with pytest.raises(DeliveryError, match="not an http:// or https:// URL") as raised:
        post_json("file:///etc/passwd", {"text": "hello"}, timeout=1)
    assert not raised.value.retryable


def test_an_unreachable_webhook_may_be_tried_again() -> None:
    with pytest.raises(DeliveryError, match="cannot reach the server") as raised:
        post_json(f"http://127.0.0.1:{_closed_port()}/hook", {"text": "hello"}, timeout=1)
    assert raised.value.retryable


def test_an_unreachable_smtp_server_may_be_tried_again() -> None:
    mail = Mail(sender="runledger@example.com", recipients=["finops@example.com"], subject="s", body="b\n")
    with pytest.raises(DeliveryError, match="cannot deliver over SMTP") as raised:
        send_mail("127.0.0.1", _closed_port(), mail, starttls=False, login=None, timeout=1)
    assert raised.value.retryable


def test_a_webhook_that_redirects_fails_for_good_and_nothing_reaches_the_other_host() -> None:
    with http_recorder() as hook, http_recorder() as elsewhere:
        hook.status, hook.location = 302, f"{elsewhere.url}/sso/login"
        with pytest.raises(DeliveryError) as raised:
            post_json(f"{hook.url}/hook", {"text": "hello"}, timeout=5)
        assert str(raised.value) == (
            f"HTTP 302 Found: the webhook redirects to 127.0.0.1:{urlsplit(elsewhere.url).port}, and an alert is "
            "never sent on to another address; set the URL the redirect leads to"
        )
        assert not raised.value.retryable
        assert hook.bodies("/hook") == [{"text": "hello"}]
        assert elsewhere.requests == [] and elsewhere.gets == []


# an answer that would be complete after 3 s at one byte every 0.1 s
ACCEPTED = b"HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nok"
SMTP_GREETING = b"220 trickle ESMTP\r\n"


def test_a_webhook_answering_one_byte_at_a_time_fails_at_the_deadline() -> None:
    with (
        trickling_server(ACCEPTED, interval=0.1) as server,
        pytest.raises(DeliveryError, match=r"^no complete answer within 0\.5 s$") as raised,
    ):
        post_json(f"http://127.0.0.1:{server.port}/hook", {"text": "hello"}, timeout=0.5)
    assert raised.value.retryable


def test_an_smtp_server_answering_one_byte_at_a_time_fails_at_the_deadline() -> None:
    mail = Mail(sender="runledger@example.com", recipients=["finops@example.com"], subject="s", body="b\n")
    with (
        trickling_server(SMTP_GREETING, interval=0.1) as server,
        pytest.raises(DeliveryError, match=r"^no complete answer within 0\.5 s$") as raised,
    ):
        send_mail("127.0.0.1", server.port, mail, starttls=False, login=None, timeout=0.5)
    assert raised.value.retryable
