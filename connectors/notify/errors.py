"""The error of a message a sender could not deliver."""


class DeliveryError(Exception):
    """A message was not accepted. The text may hold the URL or login it was sent with: the
    caller strips its secrets before logging or recording it.

    Attributes:
        retryable: whether another attempt may succeed.
    """

    def __init__(self, message: str, *, retryable: bool) -> None:
        super().__init__(message)
        self.retryable = retryable
