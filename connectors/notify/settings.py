"""Constants of the notification senders."""

# HTTP answers worth another attempt; any other failing answer is final.
RETRYABLE_HTTP_STATUSES = frozenset({408, 425, 429, 500, 502, 503, 504})
USER_AGENT = "RunLedger"
