"""Real local servers alerts are delivered to in tests: an HTTP server recording each POST (and
answering with a status the test sets) and an SMTP server (aiosmtpd) recording each message, both
on 127.0.0.1."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from email import message_from_bytes, policy
from email.message import EmailMessage
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult


@dataclass
class HttpRecorder:
    """The POSTs an HTTP server received, by path, and the status it answers with.

    Attributes:
        url: the server's root, http://127.0.0.1:PORT.
        status: what the next requests are answered with (200 unless a test sets it).
        requests: (path, JSON body) of every POST, answered or not.
    """

    url: str
    status: int = 200
    requests: list[tuple[str, object]] = field(default_factory=list)

    def bodies(self, path: str) -> list[object]:
        return [body for request_path, body in self.requests if request_path == path]


@contextmanager
def http_recorder() -> Iterator[HttpRecorder]:
    """A threaded HTTP server on a free port of 127.0.0.1, stopped afterwards."""
    recorder = HttpRecorder(url="")

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
            recorder.requests.append((self.path, json.loads(body)))
            self.send_response(recorder.status)
            self.end_headers()
            self.wfile.write(b"ok" if recorder.status < 300 else b"failed")

        def log_message(self, *args: object) -> None:
            """Quiet: the test reads `requests`."""

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    recorder.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield recorder
    finally:
        server.shutdown()
        server.server_close()


def free_port() -> int:
    """A TCP port of 127.0.0.1 nothing listens on (bound, then released)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@dataclass
class SmtpRecorder:
    """The messages an SMTP server accepted, and the login it requires.

    Attributes:
        port: the server's port on 127.0.0.1.
        login: the (username, password) AUTH must present.
        messages: every message accepted, parsed.
        logins: every username that authenticated.
    """

    port: int
    login: tuple[str, str]
    messages: list[EmailMessage] = field(default_factory=list)
    logins: list[str] = field(default_factory=list)

    async def handle_DATA(self, server: object, session: object, envelope: object) -> str:  # noqa: N802 (aiosmtpd's name)
        self.messages.append(message_from_bytes(envelope.content, policy=policy.default))
        return "250 OK"

    def authenticate(
        self, server: object, session: object, envelope: object, mechanism: str, auth_data: object
    ) -> AuthResult:
        user, password = auth_data.login.decode(), auth_data.password.decode()
        if (user, password) != self.login:
            return AuthResult(success=False, handled=False)
        self.logins.append(user)
        return AuthResult(success=True)


@contextmanager
def smtp_recorder(login: tuple[str, str]) -> Iterator[SmtpRecorder]:
    """An aiosmtpd server on a free port of 127.0.0.1 requiring `login` (over plain text: the
    test server has no TLS), stopped afterwards."""
    recorder = SmtpRecorder(port=free_port(), login=login)
    controller = Controller(
        recorder,
        hostname="127.0.0.1",
        port=recorder.port,
        authenticator=recorder.authenticate,
        auth_require_tls=False,
        auth_required=True,
    )
    controller.start()
    try:
        yield recorder
    finally:
        controller.stop()
