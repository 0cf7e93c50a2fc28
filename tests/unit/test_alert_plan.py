"""Which alert events each destination is sent, from the alerts of tonight and the ledger of
what it was told: once per crossing, once per resolution, failed ones again, owners respected;
and a destination that fails left alone for the rest of the run."""

from dataclasses import replace
from datetime import date, datetime, timedelta
from decimal import Decimal

import pytest

from pipelines.budgets.delivery import AlertEvent, Delivery, attempt_all, plan_deliveries
from pipelines.budgets.settings import Alerts, SmtpDestination, WebhookDestination
from tests.support.alert_servers import http_recorder, trickling_server

NOW = datetime(2026, 12, 2, 6, 0)
HOOKS = WebhookDestination(name="hooks", kind="webhook", url_env="HOOKS_URL")
ALICE_MAIL = SmtpDestination.model_validate(
    {"name": "mail", "kind": "smtp", "host": "h", "from": "r@example.com", "to": ["f@example.com"], "owners": ["alice"]}
)
ALERT = AlertEvent(
    event="crossed",
    alert_key="run-a:cost:warning",
    training_run="run-a",
    owner="alice",
    kind="cost",
    threshold="warning",
    crossed_on=date(2026, 10, 8),
    amount=Decimal("90760.9100000000"),
    threshold_amount=Decimal("77974.9600000000"),
    currency="USD",
)
BOBS = replace(ALERT, alert_key="run-b:cost:over", training_run="run-b", owner="bob", threshold="over")


def row(alert: AlertEvent, destination: str, sequence: int, status: str, at: datetime = NOW) -> Delivery:
    return Delivery(alert, destination, sequence, status, 1, at, at, at if status == "delivered" else None)


def plan(alerts: list[AlertEvent], ledger: list[tuple[Delivery, str | None]]) -> list[tuple[str, str, int, str]]:
    to_send, superseded = plan_deliveries(alerts, ledger, [HOOKS, ALICE_MAIL], NOW)
    return sorted(
        [(d.destination, d.alert.alert_key, d.sequence, d.alert.event) for d in to_send]
        + [(d.destination, d.alert.alert_key, d.sequence, "superseded") for d in superseded]
    )


def test_new_alerts_go_to_every_destination_taking_their_owner() -> None:
    assert plan([ALERT, BOBS], []) == [
        ("hooks", "run-a:cost:warning", 1, "crossed"),
        ("hooks", "run-b:cost:over", 1, "crossed"),
        ("mail", "run-a:cost:warning", 1, "crossed"),
    ]


def test_a_delivered_alert_is_not_sent_again_even_when_restated() -> None:
    restated = replace(ALERT, crossed_on=date(2026, 10, 9), amount=Decimal("80000.0000000000"))
    assert plan([restated], [(row(ALERT, "hooks", 1, "delivered"), "crossed")]) == [
        ("mail", "run-a:cost:warning", 1, "crossed")
    ]


def test_resolved_once_then_crossed_again() -> None:
    delivered = [(row(ALERT, "hooks", 1, "delivered"), "crossed"), (row(ALERT, "mail", 1, "delivered"), "crossed")]
    assert plan([], delivered) == [
        ("hooks", "run-a:cost:warning", 2, "resolved"),
        ("mail", "run-a:cost:warning", 2, "resolved"),
    ]
    resolved = [(row(replace(ALERT, event="resolved"), "hooks", 2, "delivered"), "resolved")]
    assert plan([], resolved) == []
    assert plan([ALERT], resolved) == [
        ("hooks", "run-a:cost:warning", 3, "crossed"),
        ("mail", "run-a:cost:warning", 1, "crossed"),
    ]


def test_a_failed_delivery_is_retried_with_tonights_figures_or_superseded() -> None:
    failed = [(row(ALERT, "hooks", 1, "failed"), None)]
    restated = replace(ALERT, amount=Decimal("91000.0000000000"))
    to_send, _ = plan_deliveries([restated], failed, [HOOKS], NOW)
    assert [(d.sequence, d.status, d.attempts, d.alert.amount) for d in to_send] == [
        (1, "sending", 1, Decimal("91000.0000000000"))
    ]
    assert plan([], failed) == [("hooks", "run-a:cost:warning", 1, "superseded")]


def test_a_fresh_claim_is_left_to_its_run_and_a_stale_one_taken_over() -> None:
    fresh = [(row(ALERT, "hooks", 1, "sending", NOW - timedelta(minutes=5)), None)]
    stale = [(row(ALERT, "hooks", 1, "sending", NOW - timedelta(hours=2)), None)]
    assert plan([ALERT], fresh) == [("mail", "run-a:cost:warning", 1, "crossed")]
    assert plan([ALERT], stale) == [
        ("hooks", "run-a:cost:warning", 1, "crossed"),
        ("mail", "run-a:cost:warning", 1, "crossed"),
    ]


def test_a_destination_that_fails_is_not_tried_again_in_the_run(monkeypatch: pytest.MonkeyPatch) -> None:
    """A trickling webhook costs one delivery's attempts, each cut at its deadline; its other
    alerts are recorded failed untried, while another destination gets all of its own."""
    slow = WebhookDestination(name="slow", kind="webhook", url_env="SLOW_URL")
    settings = Alerts(destinations=[HOOKS, slow], attempts=2, backoff_seconds=0, timeout_seconds=0.3)
    claims = [
        Delivery(alert, name, 1, "sending", attempts, NOW, NOW)
        for alert, attempts in ((ALERT, 0), (BOBS, 3))
        for name in ("slow", "hooks")
    ]
    with http_recorder() as hooks, trickling_server(b"HTTP/1.0 200 OK\r\n\r\nok", interval=0.1) as trickler:
        monkeypatch.setenv("HOOKS_URL", f"{hooks.url}/hook")
        monkeypatch.setenv("SLOW_URL", f"http://127.0.0.1:{trickler.port}/hook")
        done = attempt_all(claims, settings)
    assert [(d.destination, d.alert.alert_key, d.status, d.attempts, d.last_error) for d in done] == [
        ("slow", "run-a:cost:warning", "failed", 2, "no complete answer within 0.3 s"),
        ("hooks", "run-a:cost:warning", "delivered", 1, None),
        (
            "slow",
            "run-b:cost:over",
            "failed",
            3,
            "not tried: an earlier alert to slow failed in this run (no complete answer within 0.3 s)",
        ),
        ("hooks", "run-b:cost:over", "delivered", 4, None),
    ]
    assert trickler.connections == 2
    assert sorted(body["alert_key"] for body in hooks.bodies("/hook")) == ["run-a:cost:warning", "run-b:cost:over"]
