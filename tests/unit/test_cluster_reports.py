"""The shared clusters in the reports: the summary's section per cluster and a run report's
clusters, from the marts `cluster_utilization` and `run_cluster_share` of a hand-made warehouse
holding the demo's `p5-cluster` (its figures are checked by hand in docs/demo.md)."""

from __future__ import annotations

from datetime import date, datetime, timedelta
from decimal import Decimal
from pathlib import Path

import duckdb
import jsonschema
import pytest
from altair.vegalite.v6 import schema as vega_lite_schema

from pipelines.reports import ReportSet, write_reports
from pipelines.reports.cluster_chart import utilization_chart
from pipelines.reports.clusters import load_clusters
from pipelines.warehouse.connection import create_schema
from pipelines.warehouse.summaries import build_summaries

CLUSTER = "p5-cluster"
EVAL_RUN = "eval-7b-ckpts"
LONG_RUN = "lr-sweep-1b-lr3e-4-long"
SWEEP_RUN = "lr-sweep-1b-lr2e-3"
OTHER_RUN = "llm-13b-ft-r2"
NODE_DAY_COST = Decimal("5283.84")  # 4 p5.48xlarge x 24 h x 55.04
# (day, capacity, allocated, idle GPU-hours, idle cost): the demo's three days
DAYS = [
    (date(2026, 11, 17), Decimal(768), Decimal("471.5"), Decimal("296.5"), Decimal("2039.92")),
    (date(2026, 11, 18), Decimal(768), Decimal(544), Decimal(224), Decimal("1541.12")),
    (date(2026, 11, 19), Decimal(768), Decimal(499), Decimal(269), Decimal("1850.72")),
]
# (day, run, GPU-hours): three of the demo's runs; every GPU-hour costs 55.04 / 8 = 6.88
RUN_DAYS = [
    (date(2026, 11, 17), EVAL_RUN, Decimal(55)),
    (date(2026, 11, 18), EVAL_RUN, Decimal(68)),
    (date(2026, 11, 19), EVAL_RUN, Decimal(371)),
    (date(2026, 11, 18), LONG_RUN, Decimal(160)),
    (date(2026, 11, 19), LONG_RUN, Decimal(128)),
    (date(2026, 11, 17), SWEEP_RUN, Decimal(144)),
    (date(2026, 11, 18), SWEEP_RUN, Decimal(64)),
]
GPU_HOUR_COST = Decimal("6.88")


def _insert_run_cost(conn: duckdb.DuckDBPyConnection, key: str, run: str, day: date, cost: Decimal) -> None:
    """One attributed line, so that the run has a report."""
    start = datetime.combine(day, datetime.min.time())
    values = {
        "key": key,
        "period": datetime(2026, 11, 1),
        "start": start,
        "end": start + timedelta(days=1),
        "run": run,
        "cost": cost,
    }
    conn.execute(
        """
        insert into focus_line_items (
            x_LineItemKey, x_SourceName, x_SourceFormat, x_CostCategory, x_GpuHours, BillingCurrency,
            BillingPeriodStart, BillingPeriodEnd, ChargePeriodStart, ChargePeriodEnd, ProviderName,
            SubAccountId, ServiceName, ResourceId, BilledCost, EffectiveCost, ChargeCategory
        ) values ($key, 'aws-main', 'aws_cur2', 'compute', 0, 'USD', $period, timestamp '2026-12-01', $start,
            $end, 'AWS', '444455556666', 'Amazon EC2', 'i-0c5e7f9a1b3d20001', $cost, $cost, 'Usage')
        """,
        {name: value for name, value in values.items() if name != "run"},
    )
    conn.execute(
        """
        insert into cost_allocations (
            x_LineItemKey, x_SourceName, BillingPeriodStart, BillingCurrency, ChargePeriodStart,
            ChargePeriodEnd, ProviderName, SubAccountId, ServiceName, x_CostCategory, ResourceId,
            training_run, allocation_method, allocation_ratio, billed_cost, effective_cost, gpu_hours
        ) values ($key, 'aws-main', $period, 'USD', $start, $end, 'AWS', '444455556666', 'Amazon EC2',
            'compute', 'i-0c5e7f9a1b3d20001', $run, 'tag', 1, $cost, $cost, 0)
        """,
        values,
    )


def _fill_marts(conn: duckdb.DuckDBPyConnection) -> None:
    for day, capacity, allocated, idle, idle_cost in DAYS:
        conn.execute(
            "insert into cluster_utilization by name select $cluster as cluster, $day as day, 'USD' as currency, "
            "$capacity as capacity_gpu_hours, $allocated as allocated_gpu_hours, $idle as idle_gpu_hours, "
            "$allocated / $capacity as utilization, $capacity * 6.88 as effective_cost, "
            "$allocated * 6.88 as allocated_cost, $idle_cost as idle_cost, 0 as overhead_cost",
            {"cluster": CLUSTER, "day": day, "capacity": capacity, "allocated": allocated, "idle": idle}
            | {"idle_cost": idle_cost},
        )
    allocated_by_day = {day: allocated for day, _, allocated, _, _ in DAYS}
    for day, run, gpu_hours in RUN_DAYS:
        conn.execute(
            "insert into run_cluster_share values ($cluster, $day, 'USD', $run, $gpu_hours, $share, $cost, 0)",
            {"cluster": CLUSTER, "day": day, "run": run, "gpu_hours": gpu_hours}
            | {"share": gpu_hours / allocated_by_day[day], "cost": gpu_hours * GPU_HOUR_COST},
        )


def _warehouse(path: Path, *, marts: str = "filled") -> Path:
    """The three runs' and another run's costs, and the cluster marts `filled` or `empty`."""
    conn = duckdb.connect(str(path))
    create_schema(conn)
    for index, (day, run, gpu_hours) in enumerate(RUN_DAYS):
        _insert_run_cost(conn, f"c{index}", run, day, gpu_hours * GPU_HOUR_COST)
    _insert_run_cost(conn, "other", OTHER_RUN, date(2026, 11, 2), Decimal("1615.00"))
    build_summaries(conn)
    if marts == "filled":
        _fill_marts(conn)
    conn.close()
    return path


def _write(tmp_path: Path, *, png: bool = False, marts: str = "filled") -> ReportSet:
    warehouse = _warehouse(tmp_path / "warehouse.duckdb", marts=marts)
    with duckdb.connect(str(warehouse), read_only=True) as conn:
        return write_reports(conn, tmp_path / "reports", png=png)


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory) -> ReportSet:
    return _write(tmp_path_factory.mktemp("cluster-reports"))


def _section(text: str, start: str, end: str) -> str:
    return text[text.index(start) : text.index(end, text.index(start))]


def _run_report(reports: ReportSet, run: str) -> tuple[str, str]:
    (paths,) = [paths for paths in reports.runs if paths.training_run == run]
    return paths.html.read_text(), paths.markdown.read_text()


def test_summary_shows_the_clusters_utilization_idle_capacity_and_cost_by_day(reports: ReportSet) -> None:
    markdown = reports.summary_markdown.read_text()
    section = _section(markdown, f"## Cluster {CLUSTER}", "## Unattributed")
    # 1,514.5 of 2,304 GPU-hours held by jobs; idle 789.5 GPU-hours at 6.88 a GPU-hour
    assert (
        "2026-11-17 to 2026-11-19 (3 days): jobs held 1,514.50 of the nodes' 2,304.00 GPU-hours, a "
        "utilization of 65.7 %; idle 789.50 GPU-hours cost 5,431.76 USD." in section
    )
    assert "| 2026-11-17 | 768.00 | 471.50 | 296.50 | 61.4 % | 2,039.92 |" in section
    assert "| 2026-11-18 | 768.00 | 544.00 | 224.00 | 70.8 % | 1,541.12 |" in section
    assert "| 2026-11-19 | 768.00 | 499.00 | 269.00 | 65.0 % | 1,850.72 |" in section
    assert "| **Total** | **2,304.00** | **1,514.50** | **789.50** | **65.7 %** | **5,431.76** |" in section
    assert (
        sum(idle_cost for *_, idle_cost in DAYS) + sum(allocated * GPU_HOUR_COST for _, _, allocated, _, _ in DAYS)
        == 3 * NODE_DAY_COST
    )
    assert "System overhead" not in section


def test_summary_lists_the_runs_shares_of_the_cluster_largest_first(reports: ReportSet) -> None:
    markdown = reports.summary_markdown.read_text()
    section = _section(markdown, f"## Cluster {CLUSTER}", "## Unattributed")
    rows = [line for line in section.splitlines() if line.startswith("| [")]
    assert rows == [
        f"| [{EVAL_RUN}]({EVAL_RUN}/report.md) | 494.00 | 32.6 % | 3,398.72 |",
        f"| [{LONG_RUN}]({LONG_RUN}/report.md) | 288.00 | 19.0 % | 1,981.44 |",
        f"| [{SWEEP_RUN}]({SWEEP_RUN}/report.md) | 208.00 | 13.7 % | 1,431.04 |",
    ]
    assert "of which idle" not in section


def test_summary_chart_is_inline_in_html_and_an_image_beside_the_markdown(reports: ReportSet) -> None:
    html = reports.summary_html.read_text()
    markdown = reports.summary_markdown.read_text()
    (chart,) = reports.summary_charts
    assert chart == reports.summary_html.parent / "summary-charts" / "cluster_utilization_p5-cluster_USD.svg"
    assert chart.read_text().startswith("<svg") and "65.0 %" in chart.read_text()
    assert f"![Utilization of {CLUSTER} by day](summary-charts/{chart.name})" in markdown
    section = _section(html, f"<h2>Cluster {CLUSTER}</h2>", "<h2>Unattributed")
    assert "<svg" in section and "61.4 %" in section and "2,039.92" in section


def test_utilization_chart_is_valid_vega_lite(tmp_path: Path) -> None:
    with duckdb.connect(str(_warehouse(tmp_path / "warehouse.duckdb")), read_only=True) as conn:
        (cluster,) = load_clusters(conn)
    spec = utilization_chart(cluster).vega_lite
    validator = jsonschema.Draft7Validator(vega_lite_schema.load_schema())
    assert [error.message for error in validator.iter_errors(spec)] == []
    assert [row["utilization"] for row in spec["data"]["values"]] == pytest.approx([471.5 / 768, 544 / 768, 499 / 768])


def test_run_report_shows_the_clusters_it_ran_on_and_its_share(reports: ReportSet) -> None:
    _, markdown = _run_report(reports, EVAL_RUN)
    section = _section(markdown, "## Shared clusters the run ran on", "## Daily spend")
    # 494 of the 1,514.5 GPU-hours jobs held on the three days it ran there
    assert f"| {CLUSTER} | 2026-11-17 to 2026-11-19 (3) | USD | 494.00 | 32.6 % | 3,398.72 |" in section
    _, markdown = _run_report(reports, LONG_RUN)
    # 288 of the 544 + 499 GPU-hours jobs held on its two days
    assert f"| {CLUSTER} | 2026-11-18 to 2026-11-19 (2) | USD | 288.00 | 27.6 % | 1,981.44 |" in markdown


def test_a_run_on_no_cluster_has_no_cluster_section(reports: ReportSet) -> None:
    html, markdown = _run_report(reports, OTHER_RUN)
    assert "Shared clusters" not in markdown and "Shared clusters" not in html


def test_no_cluster_no_section_and_no_chart(tmp_path: Path) -> None:
    written = _write(tmp_path, marts="empty")
    assert "Cluster " not in written.summary_markdown.read_text()
    assert written.summary_charts == ()
    assert not (tmp_path / "reports" / "summary-charts").exists()
    _, markdown = _run_report(written, EVAL_RUN)
    assert "Shared clusters" not in markdown


def test_pngs_on_demand_for_the_summary_chart_too(tmp_path: Path) -> None:
    written = _write(tmp_path, png=True)
    svg, png = written.summary_charts
    assert (svg.suffix, png.suffix) == (".svg", ".png")
    assert png.read_bytes().startswith(b"\x89PNG\r\n\x1a\n")
    assert f"(summary-charts/{png.name})" in written.summary_markdown.read_text()


def test_a_deleted_summary_chart_is_drawn_again(tmp_path: Path) -> None:
    first = _write(tmp_path)
    (chart,) = first.summary_charts
    chart.unlink()
    with duckdb.connect(str(tmp_path / "warehouse.duckdb"), read_only=True) as conn:
        again = write_reports(conn, tmp_path / "reports")
    assert again.summary_charts == (chart,) and chart.is_file()
