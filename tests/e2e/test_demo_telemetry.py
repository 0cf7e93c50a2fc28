"""The demo's GPU telemetry of `llm-7b-pt-r1` against a hand computation: its 128 GPUs on
2026-10-06 (saved DCGM responses every 15 minutes) and its hourly step timings.

By hand, from the story (pipelines/demo/story/llm_7b.py):
- 06:00 to 12:00 every GPU at 62 %, its steps waiting for data 25 % of the time; from 13:00 to
  16:00 the 64 GPUs of nodes 9 to 16 at 10 %, the other 64 at 85 %: a mean of 0.475; every other
  hour 85 %, and 5 % of step time waiting.
- data-wait GPU-hours: 6 h x 128 x 0.25 + 18 h x 128 x 0.05 = 192 + 115.2 = 307.2.
- input_bound = 307.2 x the budget's estimated 4.5625 per GPU-h = 1,401.60; with
  compute_throughput it sums to the throughput cause exactly.
- data_loading_stall: the same 307.2 GPU-hours at the run's actual rate (its compute effective
  cost / its compute GPU-hours, 115,520.88 / 23,808 = 4.8521875) = 1,490.592.
- low_utilization: 3 hours x 128 x (1 - 0.475) x (1 - 0.05) = 191.52 GPU-hours, x 4.8521875 =
  929.29095.
- alerts: data_loading_share warning (0.25 > 0.15, not > 0.30) from 06:00 for 6 hours;
  low_gpu_utilization warning (0.475 < 0.5, not < 0.3) from 13:00 for 3 hours.
"""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal
from pathlib import Path

import pytest

from tests.support.demo_lake import SharedDemo
from tests.support.lake import lake_of, reading

pytestmark = pytest.mark.e2e

RUN = "llm-7b-pt-r1"
DAY = datetime(2026, 10, 6)


@pytest.fixture(scope="module")
def warehouse(shared_demo: SharedDemo) -> Path:
    return lake_of(shared_demo.root)


def rows(warehouse: Path, sql: str) -> list[tuple]:
    with reading(warehouse) as conn:
        return conn.execute(sql).fetchall()


def test_run_utilization_by_hour_is_the_story(warehouse: Path) -> None:
    hours = {
        moment.hour: (gpus, utilization, wait, samples, wait_gpu_hours)
        for moment, gpus, utilization, wait, samples, wait_gpu_hours in rows(
            warehouse,
            "select hour, gpus, gpu_utilization, data_wait_share, samples, data_wait_gpu_hours "
            f"from run_utilization where training_run = '{RUN}' order by hour",
        )
    }
    days = rows(warehouse, f"select distinct cast(hour as date) from run_utilization where training_run = '{RUN}'")
    assert len(hours) == 24 and days == [(DAY.date(),)]
    for hour in (13, 14, 15):
        assert hours[hour] == (128, Decimal("0.475"), Decimal("0.05"), 512, Decimal("6.4"))
    for hour in range(6, 12):
        assert hours[hour] == (128, Decimal("0.62"), Decimal("0.25"), 512, Decimal("32"))
    assert hours[12] == (128, Decimal("0.85"), Decimal("0.05"), 512, Decimal("6.4"))
    assert sum(hour[4] for hour in hours.values()) == Decimal("307.2")
    # every other run has no telemetry, and every GPU-hour of the demo reaches its run
    assert rows(warehouse, "select distinct training_run from run_utilization") == [(RUN,)]
    assert rows(warehouse, "select count(*) from gpu_utilization_runs where training_run is null") == [(0,)]
    assert rows(warehouse, "select count(*), sum(samples) from gpu_utilization") == [(128 * 24, 128 * 24 * 4)]


def test_the_throughput_cause_splits_into_input_bound_and_compute_exactly(warehouse: Path) -> None:
    causes = {
        cause: (amount, gpu_hours)
        for cause, amount, gpu_hours in rows(
            warehouse,
            "select cause, amount, gpu_hours from variance_causes "
            f"where training_run = '{RUN}' and cause in ('throughput', 'input_bound', 'compute_throughput')",
        )
    }
    assert causes["input_bound"] == (Decimal("1401.6"), Decimal("307.2"))
    throughput, throughput_gpu_hours = causes["throughput"]
    assert throughput == Decimal("11703.1518826465")  # the demo's cause, unchanged by telemetry
    assert causes["input_bound"][0] + causes["compute_throughput"][0] == throughput
    assert causes["input_bound"][1] + causes["compute_throughput"][1] == throughput_gpu_hours
    parents = rows(
        warehouse,
        f"select distinct parent from variance_causes where training_run = '{RUN}' and cause = 'input_bound'",
    )
    assert parents == [("throughput",)]


def test_waste_counts_the_data_wait_and_the_idle_hours_once(warehouse: Path) -> None:
    waste = {
        kind: (cost, gpu_hours)
        for kind, cost, gpu_hours in rows(
            warehouse,
            "select kind, effective_cost, gpu_hours from waste "
            f"where training_run = '{RUN}' and kind in ('data_loading_stall', 'low_utilization')",
        )
    }
    assert waste == {
        "data_loading_stall": (Decimal("1490.592"), Decimal("307.2")),
        "low_utilization": (Decimal("929.29095"), Decimal("191.52")),
    }


def test_each_alert_names_its_first_hour(warehouse: Path) -> None:
    alerts = rows(
        warehouse,
        "select kind, threshold, threshold_fraction, crossed_on, observed, detail from budget_alerts "
        "where kind in ('low_gpu_utilization', 'data_loading_share') order by kind",
    )
    assert alerts == [
        (
            "data_loading_share",
            "warning",
            Decimal("0.15"),
            DAY.date(),
            Decimal("0.25"),
            (
                f"{RUN} data_loading_share: data-wait share 0.250 above the warning level 0.150 for 6 hours from "
                "2026-10-06 06:00 UTC"
            ),
        ),
        (
            "low_gpu_utilization",
            "warning",
            Decimal("0.5"),
            DAY.date(),
            Decimal("0.475"),
            (
                f"{RUN} low_gpu_utilization: mean GPU utilization 0.475 below the warning level 0.500 for 3 hours "
                "from 2026-10-06 13:00 UTC"
            ),
        ),
    ]


def test_the_7b_report_shows_the_utilization_and_names_the_input_bound_share(shared_demo: SharedDemo) -> None:
    report = shared_demo.root / ".runledger" / "reports" / RUN
    html = (report / "report.html").read_text()
    markdown = (report / "report.md").read_text()
    why = (
        "Of the slower throughput, 1,401.60 (12.0 % of it) is time the GPUs spent waiting for data: 307.2 GPU-hours "
        "waiting for data over 24 hours with step timings, at the estimated 4.5625 per GPU-hour."
    )
    assert why in markdown and why in html
    assert "GPU utilization and data wait" in html and "GPU utilization and data wait" in markdown
    assert "2026-10-06 13:00" in markdown and "47.5 %" in markdown
    assert "gpu_utilization" in "".join(path.name for path in (report / "charts").iterdir())
    # the run printed both alerts in its summary of the night
    assert "budget_alerts.low_gpu_utilization_threshold: warning" in shared_demo.output
    assert "budget_alerts.data_loading_share_threshold: warning" in shared_demo.output
