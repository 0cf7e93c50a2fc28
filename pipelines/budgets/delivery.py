"""Delivers the alerts of `budget_alerts` to the configured destinations, each once, through the
ledger `alert_deliveries`.

Each run compares what `budget_alerts` holds with what each destination was told last: a new
crossing is sent as `crossed`, a delivered crossing that a restatement took back is sent as
`resolved`, a delivery that failed before is tried again. The run first claims what it will
send (rows `sending`, one commit: a run at the same time finds them and leaves them alone), then
sends without holding the lake, then records each outcome in a second commit. URLs and logins are read from the
environment when a message is sent and never written anywhere: every error text is stripped of
them before it is logged or recorded.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from urllib.parse import urlsplit

import duckdb

from connectors.notify.errors import DeliveryError
from connectors.notify.smtp import Mail, send_mail
from connectors.notify.webhook import post_json
from pipelines.budgets.settings import Alerts, Destination, SmtpDestination
from pipelines.warehouse.decimal_text import plain
from pipelines.warehouse.sql import dict_rows, read_sql

DELIVERED = "delivered"
FAILED = "failed"
SENDING = "sending"
SUPERSEDED = "superseded"
CROSSED = "crossed"
RESOLVED = "resolved"
REDACTED = "***"
# A claim (`sending`) older than this is of a run that died before it recorded the outcome: a
# later run sends it again. Far longer than any run's deliveries take, far shorter than a night.
CLAIM_EXPIRES = timedelta(hours=1)


@dataclass(frozen=True)
class AlertEvent:
    """What one message says: an alert crossed, or resolved.

    Attributes:
        event: `crossed` or `resolved`.
        alert_key: the alert's stable key, subject:kind:threshold (subject: the run, the GPU
            instance or the series; a daily_spend_anomaly alert, one per day, ends :day).
        training_run: the run it is about; None for an idle GPU instance or a series beyond runs.
        owner: the run's owner, None when no tag or registry names one (or there is no run).
        kind: what was measured (`cost`, `gpu_hours`, `wall_clock`, `storage`,
            `daily_spend_anomaly`, `idle_gpus`, `group_budget`).
        threshold: `warning` or `over`.
        crossed_on: the day the threshold was reached.
        amount: a cost alert's cumulative amount at the end of that day, else the value observed.
        threshold_amount: the amount that reaches the threshold.
        currency: the budget's currency.
        detail: budget_alerts' sentence on an alert besides cost; None for cost.
        scope_kind: a `group_budget` alert's dimension (experiment, owner, ...); None otherwise.
        scope: a `group_budget` alert's dimension value; None otherwise.
        period: a `group_budget` alert's period (YYYY-MM or the window's start date); None otherwise.
    """

    event: str
    alert_key: str
    training_run: str | None
    owner: str | None
    kind: str
    threshold: str
    crossed_on: date | None
    amount: Decimal | None
    threshold_amount: Decimal | None
    currency: str | None
    detail: str | None = None
    scope_kind: str | None = None
    scope: str | None = None
    period: str | None = None

    def text(self) -> str:
        """The one-line message every destination gets: a group budget's alert, or an alert without a
        run and owner, names only what it is about."""
        who = (
            self.subject_name
            if self.scope_kind or (self.training_run is None and self.owner is None)
            else f"{self.subject_name} (owner {self.owner or 'unknown'})"
        )
        if self.kind != "cost":
            if self.event == RESOLVED:
                return f"RunLedger: resolved: {who} no longer reaches its {self.kind} {self.threshold} level"
            return f"RunLedger: {who}: {self.detail}"
        reached = f"{self._money(self.threshold_amount)} {self.threshold} threshold"
        if self.event == RESOLVED:
            return (
                f"RunLedger: resolved: {who} no longer reaches its {reached} after a restatement "
                f"(it had on {self.crossed_on}, at {self._money(self.amount)})"
            )
        return f"RunLedger: {who} crossed its {reached} on {self.crossed_on}: {self._money(self.amount)} spent"

    def subject(self) -> str:
        """An email's subject line."""
        return f"[RunLedger] {self.subject_name}: {self.kind} {self.threshold} threshold {self.event}"

    @property
    def subject_name(self) -> str:
        """What the alert is about: its run, a group budget's scope and period (`owner ml-platform
        (2026-10)`), else the GPU instance of an `idle_gpus` alert or the series of a
        `daily_spend_anomaly` beyond runs (the key's part before the kind)."""
        if self.scope_kind:
            return f"{self.scope_kind} {self.scope} ({self.period})"
        return self.training_run or self.alert_key.split(f":{self.kind}:", 1)[0]

    def payload(self) -> dict[str, object]:
        """The JSON object a generic webhook receives (money as exact decimal text)."""
        return {
            "event": self.event,
            "alert_key": self.alert_key,
            "training_run": self.training_run,
            "owner": self.owner,
            "kind": self.kind,
            "threshold": self.threshold,
            "threshold_amount": None if self.threshold_amount is None else plain(self.threshold_amount),
            "crossed_on": None if self.crossed_on is None else self.crossed_on.isoformat(),
            "amount": None if self.amount is None else plain(self.amount),
            "currency": self.currency,
            "scope_kind": self.scope_kind,
            "scope": self.scope,
            "period": self.period,
            "text": self.text(),
        }

    def _money(self, value: Decimal | None) -> str:
        return "?" if value is None else f"{plain(value, 2, grouped=True)} {self.currency or ''}".strip()


@dataclass(frozen=True)
class Delivery:
    """One event for one destination, as the ledger holds it.

    Attributes:
        alert: what is sent.
        destination: the destination's name.
        sequence: the event's number for this (alert, destination).
        status: `sending` (claimed by a run), `delivered`, `failed` or `superseded`.
        attempts: attempts over all runs.
        first_attempted_at: when the first attempt started (UTC).
        last_attempted_at: when the last attempt started (UTC).
        delivered_at: when it was accepted (UTC), or None.
        last_error: why the last attempt failed, secrets removed, or None.
    """

    alert: AlertEvent
    destination: str
    sequence: int
    status: str
    attempts: int
    first_attempted_at: datetime | None
    last_attempted_at: datetime | None = None
    delivered_at: datetime | None = None
    last_error: str | None = None

    def row(self) -> dict[str, object]:
        """The ledger row's parameters for `record` (sql/ops/alert_deliveries.sql)."""
        alert = self.alert
        return {
            "alert_key": alert.alert_key,
            "destination": self.destination,
            "sequence": self.sequence,
            "event": alert.event,
            "training_run": alert.training_run,
            "owner": alert.owner,
            "kind": alert.kind,
            "threshold": alert.threshold,
            "crossed_on": alert.crossed_on,
            "amount": alert.amount,
            "threshold_amount": alert.threshold_amount,
            "currency": alert.currency,
            "detail": alert.detail,
            "scope_kind": alert.scope_kind,
            "scope": alert.scope,
            "period": alert.period,
            "status": self.status,
            "attempts": self.attempts,
            "first_attempted_at": self.first_attempted_at,
            "last_attempted_at": self.last_attempted_at,
            "delivered_at": self.delivered_at,
            "last_error": self.last_error,
        }


def _accepts(destination: Destination, owner: str | None) -> bool:
    """A destination without `owners` takes every alert; one with `owners` the alerts of their runs
    and of their owner group budgets (an alert with no owner: an idle GPU, a group budget of
    another dimension, goes only to destinations without `owners`)."""
    return destination.owners is None or owner in destination.owners


def plan_deliveries(
    alerts: Iterable[AlertEvent],
    ledger: Iterable[tuple[Delivery, str | None]],
    destinations: Sequence[Destination],
    now: datetime,
) -> tuple[list[Delivery], list[Delivery]]:
    """What this run sends, claimed, and which failed deliveries it gives up because the alert
    changed back.

    A destination is told `crossed` for an alert it accepts (its `owners`) and was not told so
    last; `resolved` for an alert it was last told crossed that `budget_alerts` no longer holds.
    A failed delivery of the same event is tried again (with the alert's current figures); a
    failed delivery of another event is superseded. A delivery another run claimed (`sending`)
    less than `CLAIM_EXPIRES` ago is left to it; an older claim, of a run that died, is taken over.

    Args:
        alerts: every alert `budget_alerts` holds now, as `crossed` events.
        ledger: each (alert, destination)'s latest ledger row, with the event it was last
            delivered (None if none was).
        destinations: the configured destinations.
        now: the run's time (UTC), the claims' `last_attempted_at`.

    Returns:
        (the deliveries to attempt, as `sending` claims; the superseded rows).
    """
    current = {alert.alert_key: alert for alert in alerts}
    latest = {(row.alert.alert_key, row.destination): (row, told) for row, told in ledger}
    to_send: list[Delivery] = []
    superseded: list[Delivery] = []
    for destination in destinations:
        keys = list(current) + sorted({key for key, name in latest if name == destination.name} - set(current))
        for key in keys:
            alert = current.get(key)
            last, told = latest.get((key, destination.name), (None, None))
            if last is not None and last.status == SENDING and now - last.last_attempted_at < CLAIM_EXPIRES:
                continue
            if alert is not None and _accepts(destination, alert.owner):
                wanted = None if told == CROSSED else alert
            elif alert is None and told == CROSSED:
                wanted = replace(last.alert, event=RESOLVED)
            else:
                wanted = None
            pending = last if last is not None and last.status in (FAILED, SENDING) else None
            if pending is not None and wanted is not None and pending.alert.event == wanted.event:
                to_send.append(replace(pending, alert=wanted, status=SENDING, last_attempted_at=now))
                continue
            if pending is not None:
                superseded.append(replace(pending, status=SUPERSEDED))
            if wanted is not None:
                sequence = last.sequence + 1 if last is not None else 1
                to_send.append(Delivery(wanted, destination.name, sequence, SENDING, 0, now, now))
    return to_send, superseded


def _secrets(destination: Destination) -> tuple[list[str], dict[str, str | None]]:
    """The destination's secret values from the environment: (every value to strip from texts,
    each variable's value by name)."""
    names = (
        [destination.username_env, destination.password_env]
        if isinstance(destination, SmtpDestination)
        else [destination.url_env]
    )
    values = {name: os.environ.get(name) or None for name in names if name}
    secrets = [value for value in values.values() if value]
    for value in list(secrets):
        parts = urlsplit(value)
        secrets += [part for part in (parts.path, parts.query, parts.netloc) if len(part) > 1]
    return sorted(set(secrets), key=len, reverse=True), values


def _redact(text: str, secrets: Iterable[str]) -> str:
    for secret in secrets:
        text = text.replace(secret, REDACTED)
    return text


def _mail(destination: SmtpDestination, alert: AlertEvent) -> Mail:
    """The email of an alert: its one-line text, then each field of the webhook payload."""
    body = (
        "\n".join(
            [alert.text(), ""]
            + [f"{key}: {'' if value is None else value}" for key, value in alert.payload().items() if key != "text"]
        )
        + "\n"
    )
    return Mail(sender=destination.from_, recipients=destination.to, subject=alert.subject(), body=body)


def send(destination: Destination, alert: AlertEvent, timeout: float) -> None:
    """Sends one message, reading the destination's secrets from the environment.

    Raises:
        DeliveryError: it was not accepted (a variable unset, an HTTP or SMTP error, no
            connection: `connectors.notify`); the message may contain secrets and must go
            through `_redact`.
    """
    _, values = _secrets(destination)
    unset = [name for name, value in values.items() if value is None]
    if unset:
        raise DeliveryError(f"environment variable {', '.join(unset)} is not set", retryable=False)
    if isinstance(destination, SmtpDestination):
        login = (
            (values[destination.username_env], values[destination.password_env]) if destination.username_env else None
        )
        send_mail(
            destination.host,
            destination.port,
            _mail(destination, alert),
            starttls=destination.starttls,
            login=login,
            timeout=timeout,
        )
    elif destination.kind == "slack":
        post_json(values[destination.url_env], {"text": alert.text()}, timeout)
    else:
        post_json(values[destination.url_env], alert.payload(), timeout)


def attempt(delivery: Delivery, destination: Destination, settings: Alerts) -> Delivery:
    """Tries one delivery up to `settings.attempts` times, waiting `backoff_seconds` times 1, 2,
    4, … between tries; an error another try cannot fix ends it at once.

    Returns:
        The delivery as the ledger records it: delivered, or failed with the last error (secrets
        removed) and the attempts counted.
    """
    secrets, _ = _secrets(destination)
    attempts = delivery.attempts
    error_text = None
    for number in range(settings.attempts):
        if number:
            time.sleep(settings.backoff_seconds * 2 ** (number - 1))
        started = utc_now()
        attempts += 1
        try:
            send(destination, delivery.alert, settings.timeout_seconds)
        except DeliveryError as error:
            error_text = _redact(str(error), secrets)
            if not error.retryable:
                break
            continue
        return replace(
            delivery,
            status=DELIVERED,
            attempts=attempts,
            last_attempted_at=started,
            delivered_at=utc_now(),
            last_error=None,
        )
    return replace(
        delivery,
        status=FAILED,
        attempts=attempts,
        last_attempted_at=started,
        last_error=error_text,
    )


def attempt_all(deliveries: Iterable[Delivery], settings: Alerts) -> list[Delivery]:
    """Tries each delivery (`attempt`) until one to its destination fails: the destination's
    later deliveries of the run are recorded failed untried (their attempts unchanged), for the
    next run to try, so a dead or slow destination costs one delivery's tries, not every
    alert's.

    Returns:
        Each delivery as the ledger records it, in the order given.
    """
    by_name = {destination.name: destination for destination in settings.destinations}
    down: dict[str, str] = {}
    done = []
    for delivery in deliveries:
        if delivery.destination in down:
            done.append(replace(delivery, status=FAILED, last_error=f"not tried: {down[delivery.destination]}"))
            continue
        delivery = attempt(delivery, by_name[delivery.destination], settings)
        if delivery.status == FAILED:
            down[delivery.destination] = (
                f"an earlier alert to {delivery.destination} failed in this run ({delivery.last_error})"
            )
        done.append(delivery)
    return done


def utc_now() -> datetime:
    """The current UTC time without an offset, as the warehouse's timestamps are."""
    return datetime.now(UTC).replace(tzinfo=None)


def current_alerts(conn: duckdb.DuckDBPyConnection) -> list[AlertEvent]:
    """Every alert `budget_alerts` holds, as a `crossed` event with its key and owner."""
    fields = set(AlertEvent.__dataclass_fields__)
    return [
        AlertEvent(event=CROSSED, **{key: value for key, value in row.items() if key in fields})
        for row in dict_rows(conn.execute(read_sql("ops/alert_deliveries", "alerts")))
    ]


def ledger(conn: duckdb.DuckDBPyConnection) -> list[tuple[Delivery, str | None]]:
    """Each (alert, destination)'s latest row of `alert_deliveries`, with the event it was last
    delivered."""
    rows = []
    for row in dict_rows(conn.execute(read_sql("ops/alert_deliveries", "latest"))):
        alert = AlertEvent(**{key: row[key] for key in AlertEvent.__dataclass_fields__})
        delivery = Delivery(alert, **{key: row[key] for key in Delivery.__dataclass_fields__ if key != "alert"})
        rows.append((delivery, row["told"]))
    return rows


def record(conn: duckdb.DuckDBPyConnection, deliveries: Iterable[Delivery]) -> None:
    """Writes each delivery's row, replacing the row of the same event; the caller owns the
    transaction."""
    for delivery in deliveries:
        row = delivery.row()
        conn.execute(
            read_sql("ops/alert_deliveries", "forget"),
            {key: row[key] for key in ("alert_key", "destination", "sequence")},
        )
        conn.execute(read_sql("ops/alert_deliveries", "record"), row)
