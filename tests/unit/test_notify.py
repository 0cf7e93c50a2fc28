"""The notification senders' errors, without a server: what another attempt may fix."""

from __future__ import annotations

import socket

import pytest

from connectors.notify.errors import DeliveryError
from connectors.notify.smtp import Mail, send_mail
from connectors.notify.webhook import post_json


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
