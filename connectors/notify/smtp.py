"""Sends a plain-text email over SMTP, with STARTTLS and a login when asked."""

from __future__ import annotations

import smtplib
import socket
import ssl
from collections.abc import Sequence
from dataclasses import dataclass
from email.message import EmailMessage

from connectors.notify.deadline import Deadline
from connectors.notify.errors import DeliveryError


@dataclass(frozen=True)
class Mail:
    """One plain-text message.

    Attributes:
        sender: the From address.
        recipients: the To addresses.
        subject: the subject line.
        body: the text.
    """

    sender: str
    recipients: Sequence[str]
    subject: str
    body: str


class _WatchedSMTP(smtplib.SMTP):
    """An SMTP client connected to host:port, whose connection `deadline` cuts."""

    def __init__(self, host: str, port: int, deadline: Deadline) -> None:
        self._deadline = deadline
        super().__init__(host, port, timeout=deadline.seconds)

    def _get_socket(self, host: str, port: int, timeout: float) -> socket.socket:
        return self._deadline.watch(super()._get_socket(host, port, timeout))


def send_mail(
    host: str,
    port: int,
    mail: Mail,
    *,
    starttls: bool,
    login: tuple[str, str] | None,
    timeout: float,
) -> None:
    """Sends `mail` through the SMTP server at host:port once.

    Args:
        host: the server's host name.
        port: its port.
        mail: the message.
        starttls: upgrade the connection with STARTTLS (the system's certificates) before
            logging in.
        login: (user name, password), or None to send without logging in.
        timeout: seconds the whole send may take, from connecting to the last answer.

    Raises:
        DeliveryError: the server refused (retryable for its 4xx answers) or could not be
            reached or did not finish within `timeout` (retryable).
    """
    message = EmailMessage()
    message["Subject"] = mail.subject
    message["From"] = mail.sender
    message["To"] = ", ".join(mail.recipients)
    message.set_content(mail.body)
    with Deadline(timeout) as deadline:
        try:
            with _WatchedSMTP(host, port, deadline) as smtp:
                if starttls:
                    smtp.starttls(context=ssl.create_default_context())
                if login is not None:
                    smtp.login(*login)
                smtp.send_message(message)
        except smtplib.SMTPResponseException as error:
            deadline.check()
            raise DeliveryError(
                f"SMTP {error.smtp_code} {error.smtp_error.decode(errors='replace')}",
                retryable=error.smtp_code < 500,
            ) from None
        except (smtplib.SMTPException, OSError) as error:
            deadline.check()
            raise DeliveryError(f"cannot deliver over SMTP: {error}", retryable=True) from None
        deadline.check()
