"""Real local servers alerts are delivered to in tests: an HTTP server recording each request (and
answering with a status and redirect the test sets), an SMTP server (aiosmtpd) recording each
message, and a server that answers one byte at a time, all on 127.0.0.1."""

from __future__ import annotations

import contextlib
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
    """The requests an HTTP server received, by path, and the status it answers with.

    Attributes:
        url: the server's root, http://127.0.0.1:PORT.
        status: what the next requests are answered with (200 unless a test sets it).
        location: the `Location` header of the answers, None for none.
        requests: (path, JSON body) of every POST, answered or not.
        gets: the path of every GET.
    """

    url: str
    status: int = 200
    location: str | None = None
    requests: list[tuple[str, object]] = field(default_factory=list)
    gets: list[str] = field(default_factory=list)

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
            self._answer()

        def do_GET(self) -> None:
            recorder.gets.append(self.path)
            self._answer()

        def _answer(self) -> None:
            self.send_response(recorder.status)
            if recorder.location is not None:
                self.send_header("Location", recorder.location)
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


@dataclass
class Trickler:
    """A server that answers every connection with `answer`, one byte every `interval` seconds,
    whatever it is sent.

    Attributes:
        port: its port on 127.0.0.1.
        connections: how many connections it took.
    """

    port: int
    connections: int = 0


@contextmanager
def trickling_server(answer: bytes, interval: float) -> Iterator[Trickler]:
    """A Trickler on a free port of 127.0.0.1 (one thread per connection), stopped afterwards."""
    listener = socket.create_server(("127.0.0.1", 0))
    trickler = Trickler(port=listener.getsockname()[1])
    stopped = threading.Event()

    def trickle(conn: socket.socket) -> None:
        with conn:
            for byte in answer:
                if stopped.wait(interval):
                    return
                try:
                    conn.sendall(bytes([byte]))
                except OSError:
                    return  # the client hung up

    def serve() -> None:
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:
                return  # closed
            trickler.connections += 1
            threading.Thread(target=trickle, args=(conn,), daemon=True).start()

    threading.Thread(target=serve, daemon=True).start()
    try:
        yield trickler
    finally:
        stopped.set()
        with contextlib.suppress(OSError):  # wakes the blocked accept
            listener.shutdown(socket.SHUT_RDWR)
        listener.close()


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
