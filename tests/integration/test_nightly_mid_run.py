"""The nightly view mid-run: the demo cut at 2026-10-06 00:00, while llm-7b-pt-r1 trains. Its
as_of, status and forecast against hand computation from the cut's own files."""

from __future__ import annotations

import json
from datetime import datetime
from decimal import Decimal
from pathlib import Path

import pytest

from tests.support.demo_cut import MID_RUN_CUT, run_cut_demo
from tests.support.lake import lake_of, reading

PLANNED_TOKENS = Decimal("6.5e11")  # the 7B budget's model.tokens
TOKENS_PER_STEP = 1024 * 4096


@pytest.fixture(scope="module")
def cut_demo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return run_cut_demo(tmp_path_factory.mktemp("cut")).parent


def variance(root: Path) -> dict[tuple[str, str], dict]:
    with reading(lake_of(root)) as conn:
        cursor = conn.execute("select * from budget_variance")
        columns = [column[0] for column in cursor.description]
        return {(row[0], row[1]): dict(zip(columns, row)) for row in cursor.fetchall()}


def test_as_of_is_each_sources_newest_hour_with_usage(cut_demo: Path) -> None:
    gcp_usage_ends = [
        datetime.fromisoformat(row["usage_end_time"].removesuffix(" UTC"))
        for path in (cut_demo / ".runledger" / "demo" / "gcp").glob("*.jsonl")
        for row in map(json.loads, path.read_text().splitlines())
        if row["cost_type"] == "regular"
    ]
    rows = variance(cut_demo)

    # the month's RI fee, support, tax and credit lines end on 2026-11-01: they do not count
    assert rows["llm-7b-pt-r1", "total"]["as_of"] == MID_RUN_CUT
    assert rows["llm-7b-pt-r1", "total"]["as_of_by_source"] == {"aws-main": MID_RUN_CUT}
    with reading(lake_of(cut_demo)) as conn:
        sources = dict(conn.execute("select source_name, as_of from source_as_of()").fetchall())
    assert sources == {"aws-main": MID_RUN_CUT, "gcp-main": max(gcp_usage_ends)}
    assert sources["gcp-main"] < MID_RUN_CUT  # rows exported by the cut: they lag


def test_the_7b_forecast_is_its_remaining_tokens_at_the_pace_and_rate_so_far(cut_demo: Path) -> None:
    events = [
        json.loads(line) for line in (cut_demo / ".runledger/demo/events/llm-7b-pt-r1.jsonl").read_text().splitlines()
    ]
    trained = Decimal(events[-1]["step"] * TOKENS_PER_STEP)  # 56,232 steps at the cut
    rows = variance(cut_demo)
    compute, total = rows["llm-7b-pt-r1", "compute"], rows["llm-7b-pt-r1", "total"]

    # compute: the spend so far + the remaining tokens at the GPU-hours per token so far, at the
    # cost per GPU-hour so far = the spend so far x planned / trained tokens
    remaining_gpu_hours = (PLANNED_TOKENS - trained) * compute["actual_gpu_hours"] / trained
    expected = compute["actual_cost"] + remaining_gpu_hours * compute["actual_rate"]
    assert events[-1]["step"] == 56_232
    assert compute["forecast_at_completion"] == pytest.approx(expected, rel=Decimal("1e-9"))
    assert total["forecast_method"] == "progress"
    assert abs(total["forecast_at_completion"] - 124_800) < Decimal("0.1") * 124_800
    # fixed data and monitoring counted once, at their estimate
    assert rows["llm-7b-pt-r1", "data"]["forecast_at_completion"] == Decimal(800)
    assert rows["llm-7b-pt-r1", "monitoring"]["forecast_at_completion"] == Decimal(400)


def test_statuses_mid_run(cut_demo: Path) -> None:
    rows = variance(cut_demo)
    total_7b = rows["llm-7b-pt-r1", "total"]
    done = trained_share = Decimal(56_232 * TOKENS_PER_STEP) / PLANNED_TOKENS  # 0.3628524654
    fixed = Decimal(800 + 400)
    pro_rata = (total_7b["estimated_cost"] - fixed) * done + fixed

    # 45,694.45 spent where 1.1 x the pro-rata burn is about 40,260: warning, well before 80 %
    assert total_7b["actual_cost"] > Decimal("1.1") * pro_rata
    assert total_7b["actual_cost"] < Decimal("0.8") * total_7b["estimated_cost"]
    assert total_7b["status"] == "warning"
    assert trained_share == done
    # not started yet: nothing spent, nothing forecast, on track
    for run in ("llm-13b-ft-r2", "llm-3b-pt-gcp"):
        assert rows[run, "total"]["status"] == "on_track"
        assert rows[run, "total"]["actual_cost"] == 0
        assert rows[run, "total"]["forecast_method"] == "linear"
        assert rows[run, "total"]["forecast_at_completion"] is None


def test_no_threshold_crossed_and_progress_stops_at_the_cut(cut_demo: Path) -> None:
    with reading(lake_of(cut_demo)) as conn:
        # before the storage estimates counted the nodes' volumes, the 7B run's EBS (82.58 a day from
        # 10-03) crossed both storage levels of its 23.30 on its first day; now 3 days of it stay
        # below the 601.01 estimate
        alerts = conn.execute("select count(*) from budget_alerts").fetchone()
        progress = conn.execute(
            "select state, tokens_trained, wall_clock_hours, as_of from run_progress "
            "where training_run = 'llm-7b-pt-r1'"
        ).fetchone()
    assert alerts == (0,)
    assert progress == ("training", 56_232 * TOKENS_PER_STEP, Decimal(72), MID_RUN_CUT)


def test_the_report_header_shows_each_sources_as_of_where_they_differ(cut_demo: Path) -> None:
    html = (cut_demo / ".runledger/reports/llm-7b-pt-r1/report.html").read_text()
    with reading(lake_of(cut_demo)) as conn:
        ((gcp_as_of,),) = conn.execute("select as_of from source_as_of() where source_name = 'gcp-main'").fetchall()

    header = html[html.index("As of, per source") :]
    header = header[: header.index("</tr>")]
    assert "aws-main 2026-10-06 00:00" in header
    assert f"gcp-main {gcp_as_of:%Y-%m-%d %H:%M}" in header
