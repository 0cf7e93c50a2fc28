"""One message's deadline: the connections of a send are cut when its time is up.

A socket timeout bounds each read, not the send: a server answering one byte a second never
trips it. A timer shuts the connections down instead, so the blocked read returns at once.
"""

from __future__ import annotations

import contextlib
import socket
import threading
from types import TracebackType

from connectors.notify.errors import DeliveryError


class Deadline:
    """Cuts every connection it watches `seconds` after it is entered (a context manager).

    Attributes:
        seconds: the time one send may take, from connecting to the end of the answer.
    """

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self._expired = False
        self._sockets: list[socket.socket] = []
        self._lock = threading.Lock()
        self._timer = threading.Timer(seconds, self._cut)
        self._timer.daemon = True

    def watch(self, sock: socket.socket) -> socket.socket:
        """Cuts `sock` when the time is up (at once if it is), and returns it."""
        with self._lock:
            self._sockets.append(sock)
            if self._expired:
                _shut(sock)
        return sock

    def check(self) -> None:
        """Raises the timeout's DeliveryError (retryable) if the time is up."""
        if self._expired:
            raise DeliveryError(f"no complete answer within {self.seconds:g} s", retryable=True)

    def _cut(self) -> None:
        with self._lock:
            self._expired = True
            for sock in self._sockets:
                _shut(sock)

    def __enter__(self) -> Deadline:
        self._timer.start()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self._timer.cancel()


def _shut(sock: socket.socket) -> None:
    # the plain socket's shutdown, also under TLS: it ends a read blocked in another thread
    # without touching the TLS state that read is using
    with contextlib.suppress(OSError):  # already closed
        socket.socket.shutdown(sock, socket.SHUT_RDWR)
