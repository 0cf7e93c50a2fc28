"""Post-mortem reports written from a small hand-made warehouse."""

from __future__ import annotations

import re
import shutil
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path

import altair
import duckdb
import jsonschema
import pytest
from altair.vegalite.v6 import schema as vega_lite_schema

from pipelines.attribution.registry import RegisteredRun, replace_run_registry
from pipelines.budgets.tables import build_budget_alerts
from pipelines.reports import ReportSet, chart_rendering, report_set, write_reports
from pipelines.reports.charts import cumulative_spend_chart
from pipelines.reports.data import (
    CostLine,
    DailySpend,
    RunHeader,
    known_runs,
    load_details,
    load_overviews,
    load_reconciliation,
)
from pipelines.reports.writer import REPORT_SET_FILE, run_charts
from pipelines.warehouse.connection import create_schema
from pipelines.warehouse.summaries import build_summaries

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
PERIOD = datetime(2026, 10, 1)
SOURCE = "aws-main"
BUDGETED_RUN = "llm-7b-pt-r1"
UNBUDGETED_RUN = "llm-13b-ft-r2"
RUN_ACCOUNT = "111111111111"
FT_ACCOUNT = "222222222222"
OTHER_ACCOUNT = "999999999999"
CHECKPOINTS = "arn:aws:s3:::ckpt-7b"
SAVINGS_PLAN = "arn:aws:savingsplans::111122223333:savingsplan/sp-0a1b"


@dataclass(frozen=True)
class Line:
    """One billing line, allocated whole to one run (or to none)."""

    key: str
    day: date
    account: str
    category: str
    resource: str
    run: str | None
    cost: Decimal
    gpu_hours: Decimal = Decimal(0)
    charge_category: str = "Usage"


COMPUTE_COSTS = [
    Decimal("2000.335"),
    Decimal("2000.335"),
    Decimal("2000.335"),
    Decimal("1800.1234567891"),
    Decimal("1700.5"),
]
LINES = [
    *(
        Line(
            f"c{index}",
            date(2026, 10, 3 + index),
            RUN_ACCOUNT,
            "compute",
            "i-0a1",
            BUDGETED_RUN,
            cost,
            Decimal(512),
        )
        for index, cost in enumerate(COMPUTE_COSTS)
    ),
    Line("s1", date(2026, 10, 4), RUN_ACCOUNT, "storage", CHECKPOINTS, BUDGETED_RUN, Decimal("150.25")),
    Line("s2", date(2026, 10, 6), RUN_ACCOUNT, "storage", CHECKPOINTS, BUDGETED_RUN, Decimal("149.9999999999")),
    Line("n1", date(2026, 10, 5), RUN_ACCOUNT, "network", "nat-0a1", BUDGETED_RUN, Decimal("80.005")),
    Line("b1", date(2026, 10, 8), FT_ACCOUNT, "compute", "i-0b2", UNBUDGETED_RUN, Decimal("1234.5"), Decimal(100)),
    Line("b2", date(2026, 10, 9), FT_ACCOUNT, "compute", "i-0b2", UNBUDGETED_RUN, Decimal("1234.5"), Decimal(100)),
    Line("u1", date(2026, 10, 5), RUN_ACCOUNT, "storage", "vol-0orphan", None, Decimal("321.5")),
    Line("u2", date(2026, 10, 6), RUN_ACCOUNT, "compute", "i-0untagged", None, Decimal("45.25")),
    Line("u3", date(2026, 10, 6), OTHER_ACCOUNT, "compute", "i-0elsewhere", None, Decimal("77.7")),
    # a Savings Plan fee of the run's account: unattributed, but no tag can move it
    Line(
        "f1",
        date(2026, 10, 1),
        RUN_ACCOUNT,
        "compute",
        SAVINGS_PLAN,
        None,
        Decimal("612.4"),
        charge_category="Purchase",
    ),
]

ESTIMATES = {
    "compute": Decimal("9750"),
    "storage": Decimal("250"),
    "network": Decimal("100"),
    "data": Decimal("2000"),
}
ESTIMATED_GPU_HOURS = Decimal(2500)
ESTIMATED_RATE = Decimal("3.9")


def _actual(run: str, category: str | None = None) -> Decimal:
    return sum(
        (line.cost for line in LINES if line.run == run and category in (None, line.category)),
        Decimal(0),
    )


def _insert_lines(conn: duckdb.DuckDBPyConnection) -> None:
    for line in LINES:
        start = datetime.combine(line.day, datetime.min.time())
        conn.execute(
            """
            insert into focus_line_items (
                x_LineItemKey, x_SourceName, x_SourceFormat, x_CostCategory, x_GpuHours,
                BillingCurrency, BillingPeriodStart, BillingPeriodEnd, ChargePeriodStart,
                ChargePeriodEnd, ProviderName, SubAccountId, ServiceName, ResourceId,
                BilledCost, EffectiveCost, ChargeCategory
            ) values ($key, $source, 'aws_cur2', $category, $gpu_hours, 'USD', $period,
                $period_end, $start, $end, 'AWS', $account, 'Amazon EC2', $resource, $cost, $cost,
                $charge_category)
            """,
            {
                "key": line.key,
                "source": SOURCE,
                "category": line.category,
                "gpu_hours": line.gpu_hours,
                "period": PERIOD,
                "period_end": datetime(2026, 11, 1),
                "start": start,
                "end": start + timedelta(days=1),
                "account": line.account,
                "resource": line.resource,
                "cost": line.cost,
                "charge_category": line.charge_category,
            },
        )
        conn.execute(
            """
            insert into cost_allocations (
                x_LineItemKey, x_SourceName, BillingPeriodStart, BillingCurrency, ChargePeriodStart,
                ChargePeriodEnd, ProviderName, SubAccountId, ServiceName, x_CostCategory, ResourceId,
                training_run, experiment, dataset_version, owner, allocation_method,
                allocation_ratio, billed_cost, effective_cost, gpu_hours
            ) values ($key, $source, $period, 'USD', $start, $end, 'AWS', $account, 'Amazon EC2',
                $category, $resource, $run, $experiment, $dataset, $owner, $method, 1, $cost, $cost,
                $gpu_hours)
            """,
            {
                "key": line.key,
                "source": SOURCE,
                "period": PERIOD,
                "start": start,
                "end": start + timedelta(days=1),
                "account": line.account,
                "category": line.category,
                "resource": line.resource,
                "run": line.run,
                "experiment": "scaling-7b" if line.run == BUDGETED_RUN else None,
                "dataset": "fineweb-edu-v3.2" if line.run == BUDGETED_RUN else None,
                "owner": {BUDGETED_RUN: "alice", UNBUDGETED_RUN: "bob"}.get(line.run),
                "method": "tag" if line.run else "unattributed",
                "cost": line.cost,
                "gpu_hours": line.gpu_hours,
            },
        )


def _insert_load(conn: duckdb.DuckDBPyConnection, raw_billed_cost: Decimal) -> None:
    conn.execute(
        """
        insert into loads (
            load_id, source_name, source_format, billing_period, raw_rows, raw_billed_cost,
            loaded_rows, loaded_billed_cost, loaded_effective_cost, currency, status, started_at,
            finished_at
        ) values ('load-1', $source, 'aws_cur2', $period, $rows, $raw, $rows, $total, $total,
            'USD', 'loaded', $at, $at)
        """,
        {
            "source": SOURCE,
            "period": PERIOD.date(),
            "rows": len(LINES),
            "raw": raw_billed_cost,
            "total": sum((line.cost for line in LINES), Decimal(0)),
            "at": datetime(2026, 10, 16, 2, 0),
        },
    )


def _insert_budget(conn: duckdb.DuckDBPyConnection) -> None:
    thresholds = {"warning": Decimal("0.8"), "over": Decimal("1.0")}
    window = {"start": date(2026, 10, 1), "end": date(2026, 11, 1)}
    for category, estimate in ESTIMATES.items():
        is_compute = category == "compute"
        conn.execute(
            """
            insert into budget_baselines (
                training_run, cost_category, currency, estimated_cost, estimated_gpu_hours,
                estimated_rate, thresholds, "window", budget_file
            ) values (
                $run, $category, 'USD', $estimate, $gpu_hours, $rate, $thresholds, $window,
                'budgets/llm-7b-pt-r1.yaml')
            """,
            {
                "run": BUDGETED_RUN,
                "category": category,
                "estimate": estimate,
                "gpu_hours": ESTIMATED_GPU_HOURS if is_compute else None,
                "rate": ESTIMATED_RATE if is_compute else None,
                "thresholds": thresholds,
                "window": window,
            },
        )


def _insert_variance(conn: duckdb.DuckDBPyConnection) -> None:
    actual_gpu_hours = sum((line.gpu_hours for line in LINES if line.run == BUDGETED_RUN), Decimal(0))
    for category, estimate in [*ESTIMATES.items(), ("total", sum(ESTIMATES.values(), Decimal(0)))]:
        actual = _actual(BUDGETED_RUN, None if category == "total" else category)
        variance = actual - estimate
        compute = {}
        if category == "compute":
            usage = (actual_gpu_hours - ESTIMATED_GPU_HOURS) * ESTIMATED_RATE
            compute = {
                "estimated_gpu_hours": ESTIMATED_GPU_HOURS,
                "actual_gpu_hours": actual_gpu_hours,
                "estimated_rate": ESTIMATED_RATE,
                "actual_rate": actual / actual_gpu_hours,
                "rate_variance": variance - usage,
                "usage_variance": usage,
            }
        conn.execute(
            """
            insert into budget_variance (
                training_run, cost_category, currency, estimated_cost, actual_cost, variance,
                variance_pct, status, forecast_at_completion, estimated_gpu_hours,
                actual_gpu_hours, estimated_rate, actual_rate, rate_variance, usage_variance, as_of
            ) values ($run, $category, 'USD', $estimate, $actual, $variance, $variance_pct,
                $status, $forecast, $estimated_gpu_hours, $actual_gpu_hours, $estimated_rate,
                $actual_rate, $rate_variance, $usage_variance, $as_of)
            """,
            {
                "run": BUDGETED_RUN,
                "category": category,
                "estimate": estimate,
                "actual": actual,
                "variance": variance,
                "variance_pct": variance / estimate,
                "status": "warning" if category == "total" else "under",
                "forecast": actual * 31 / 15,
                "estimated_gpu_hours": compute.get("estimated_gpu_hours"),
                "actual_gpu_hours": compute.get("actual_gpu_hours"),
                "estimated_rate": compute.get("estimated_rate"),
                "actual_rate": compute.get("actual_rate"),
                "rate_variance": compute.get("rate_variance"),
                "usage_variance": compute.get("usage_variance"),
                "as_of": datetime(2026, 10, 16),
            },
        )


def _build_warehouse(path: Path, *, raw_billed_cost: Decimal | None = None) -> Path:
    conn = duckdb.connect(str(path))
    create_schema(conn)
    _insert_lines(conn)
    build_summaries(conn)
    all_lines_cost = sum((line.cost for line in LINES), Decimal(0))
    _insert_load(conn, all_lines_cost if raw_billed_cost is None else raw_billed_cost)
    _insert_budget(conn)
    _insert_variance(conn)
    build_budget_alerts(conn)
    conn.close()
    return path


def _write(
    tmp_path: Path, runs: list[str] | None = None, *, png: bool = False, **warehouse_options: Decimal
) -> ReportSet:
    warehouse = _build_warehouse(tmp_path / "warehouse.duckdb", **warehouse_options)
    with duckdb.connect(str(warehouse), read_only=True) as conn:
        return write_reports(conn, tmp_path / "reports", runs, png=png)


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory) -> ReportSet:
    return _write(tmp_path_factory.mktemp("reports"))


def _run_report(reports: ReportSet, run: str) -> tuple[str, str]:
    (paths,) = [paths for paths in reports.runs if paths.training_run == run]
    return paths.html.read_text(), paths.markdown.read_text()


def _money(value: Decimal) -> str:
    return f"{value.quantize(Decimal('0.01')):,.2f}"


def test_every_known_run_gets_a_report_and_the_summary_is_written(reports: ReportSet) -> None:
    assert [paths.training_run for paths in reports.runs] == [UNBUDGETED_RUN, BUDGETED_RUN]
    assert all(path.exists() for path in reports.paths)
    assert reports.summary_html.name == "summary.html"
    assert reports.runs[1].html == reports.summary_html.parent / BUDGETED_RUN / "report.html"


def test_budgeted_report_shows_exact_totals_rounded_once(reports: ReportSet) -> None:
    html, markdown = _run_report(reports, BUDGETED_RUN)
    actual = _actual(BUDGETED_RUN)
    estimate = sum(ESTIMATES.values(), Decimal(0))
    assert _money(estimate) == "12,100.00"
    assert _money(actual) == "9,881.88"
    assert _money(_actual(BUDGETED_RUN, "compute")) == "9,501.63"
    assert _money(actual - estimate) == "-2,218.12"
    for text in ("12,100.00", "9,881.88", "9,501.63", "-2,218.12"):
        assert text in html
        assert text in markdown
    # Rounding each compute line before summing would give 9,501.64.
    assert "9,501.64" not in html
    assert "Warning" in html and "Warning" in markdown
    window, as_of = "2026-10-01 to 2026-11-01", "2026-10-16 00:00 UTC"
    for header in ("scaling-7b", "fineweb-edu-v3.2", "alice", window, as_of):
        assert header in html
        assert header in markdown


def test_compute_split_into_rate_and_usage(reports: ReportSet) -> None:
    html, markdown = _run_report(reports, BUDGETED_RUN)
    usage = _money((Decimal(2560) - ESTIMATED_GPU_HOURS) * ESTIMATED_RATE)
    for text in ("2,500.0", "2,560.0", "3.9000", f"+{usage}"):
        assert text in html
        assert text in markdown


def test_html_is_self_contained_with_an_inline_svg_per_chart(reports: ReportSet) -> None:
    for paths in reports.runs:
        html = paths.html.read_text()
        assert html.count("<svg") == len(paths.charts)
        for chart in paths.charts:  # the very SVG the Markdown shows, inline
            assert chart.read_text() in html
        urls = re.findall(r"https?://[^\s\"'<>)]+", html)
        assert all(url.startswith("http://www.w3.org/") for url in urls), urls
        assert "<script" not in html
    budgeted = next(paths for paths in reports.runs if paths.training_run == BUDGETED_RUN)
    assert {path.name for path in budgeted.charts} == {
        "cumulative_spend.svg",
        "estimate_vs_actual.svg",
        "daily_spend.svg",
        "variance_waterfall.svg",
        "top_resources.svg",
    }


def test_markdown_shows_each_chart_svg_relatively_and_no_png_is_drawn(reports: ReportSet) -> None:
    for paths in reports.runs:
        markdown = paths.markdown.read_text()
        assert markdown.count("![") == len(paths.charts)
        for chart in paths.charts:
            assert chart.read_text().startswith('<svg xmlns="http://www.w3.org/2000/svg"')
            assert f"](charts/{chart.name})" in markdown
        assert sorted((paths.html.parent / "charts").iterdir()) == sorted(paths.charts)


def test_pngs_on_demand_replace_the_svgs_in_the_markdown_only(tmp_path: Path) -> None:
    with_png = _write(tmp_path, [BUDGETED_RUN], png=True)
    (paths,) = with_png.runs
    svgs = [chart for chart in paths.charts if chart.suffix == ".svg"]
    pngs = [chart for chart in paths.charts if chart.suffix == ".png"]
    assert [png.with_suffix(".svg") for png in pngs] == svgs and len(svgs) == 5
    markdown, html = paths.markdown.read_text(), paths.html.read_text()
    for svg, png in zip(svgs, pngs, strict=True):
        assert png.read_bytes().startswith(PNG_SIGNATURE)
        assert f"](charts/{png.name})" in markdown and f"](charts/{svg.name})" not in markdown
        assert svg.read_text() in html


def test_run_without_budget_shows_actual_only(reports: ReportSet) -> None:
    html, markdown = _run_report(reports, UNBUDGETED_RUN)
    assert "2,469.00" in html and "2,469.00" in markdown
    assert "no budget baseline" in html and "no budget baseline" in markdown
    assert "Variance waterfall" not in html
    assert "bob" in html


def test_unattributed_resources_come_from_the_runs_accounts_only(reports: ReportSet) -> None:
    html, markdown = _run_report(reports, BUDGETED_RUN)
    for document in (html, markdown):
        assert "vol-0orphan" in document and "321.50" in document
        assert "i-0untagged" in document
        assert "i-0elsewhere" not in document
        assert SAVINGS_PLAN not in document and "612.40" not in document
        assert "2 untagged resource rows (no run, taggable)" in document and "366.75 USD" in document
    assert document.index("vol-0orphan") < document.index("i-0untagged")


def test_a_registered_resource_charged_outside_the_window_is_listed_apart(tmp_path: Path) -> None:
    """An instance the registry names for the run, charged after its window (spend other than
    storage stays unattributed there), is shown apart from the tagging worklist."""
    warehouse = _build_warehouse(tmp_path / "warehouse.duckdb")
    with duckdb.connect(str(warehouse)) as conn:
        replace_run_registry(
            conn,
            [
                RegisteredRun(
                    id=BUDGETED_RUN, start=datetime(2026, 10, 3), end=datetime(2026, 10, 9), resources=["i-0a1*"]
                )
            ],
        )
        conn.execute(
            "insert into cost_allocations (x_LineItemKey, x_SourceName, BillingPeriodStart, BillingCurrency, "
            "ChargePeriodStart, ChargePeriodEnd, ProviderName, SubAccountId, ServiceName, x_CostCategory, ResourceId, "
            "allocation_method, allocation_rule, allocation_ratio, billed_cost, effective_cost, gpu_hours) values "
            "('late', $source, $period, 'USD', '2026-10-12', '2026-10-13', 'AWS', $account, 'Amazon EC2', 'compute', "
            "'i-0a1late', 'unattributed', 'outside registry window', 1, 12.5, 12.5, 8)",
            {"source": SOURCE, "period": PERIOD, "account": RUN_ACCOUNT},
        )
    with duckdb.connect(str(warehouse), read_only=True) as conn:
        written = write_reports(conn, tmp_path / "reports", [BUDGETED_RUN])
    markdown = _run_report(written, BUDGETED_RUN)[1]
    assert "Outside the run's registered window: the run registry names these resources for this run" in markdown
    assert "| i-0a1late | 2026-10-12 00:00 UTC to 2026-10-13 00:00 UTC | USD | 12.50 |" in markdown


def test_reconciliation_line(reports: ReportSet, tmp_path: Path) -> None:
    html, markdown = _run_report(reports, BUDGETED_RUN)
    assert "Reconciliation: reconciled for 2026-10" in html
    assert "Reconciliation: reconciled for 2026-10" in markdown
    broken = _write(tmp_path, [BUDGETED_RUN], raw_billed_cost=Decimal("1"))
    assert "Reconciliation: NOT reconciled for 2026-10" in broken.runs[0].html.read_text()


def test_summary_lists_runs_totals_and_unattributed_share(reports: ReportSet) -> None:
    html = reports.summary_html.read_text()
    markdown = reports.summary_markdown.read_text()
    untagged = Decimal("321.5") + Decimal("45.25") + Decimal("77.7")
    unattributed = untagged + Decimal("612.4")
    total = sum((line.cost for line in LINES), Decimal(0))
    share = f"{(unattributed / total * 100).quantize(Decimal('0.1'))} %"
    untagged_share = f"{(untagged / total * 100).quantize(Decimal('0.1'))} %"
    for document in (html, markdown):
        assert "12,100.00" in document and "9,881.88" in document and "2,469.00" in document
        assert _money(_actual(BUDGETED_RUN) + _actual(UNBUDGETED_RUN)) in document
        assert _money(unattributed) in document and share in document
        assert _money(untagged) in document and untagged_share in document
    assert f'href="{BUDGETED_RUN}/report.html"' in html
    assert f"]({BUDGETED_RUN}/report.md)" in markdown


def test_unknown_run_is_named_with_the_known_runs(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="llm-nope") as raised:
        _write(tmp_path, ["llm-nope"])
    assert BUDGETED_RUN in str(raised.value) and UNBUDGETED_RUN in str(raised.value)


def test_one_run_only(tmp_path: Path) -> None:
    written = _write(tmp_path, [UNBUDGETED_RUN])
    assert [paths.training_run for paths in written.runs] == [UNBUDGETED_RUN]
    assert not (tmp_path / "reports" / BUDGETED_RUN).exists()
    assert BUDGETED_RUN in written.summary_html.read_text()


def test_budget_without_spend_and_an_unsafe_run_id(tmp_path: Path) -> None:
    conn = _budget_only_warehouse(tmp_path / "warehouse.duckdb", ["team/run 1"])
    written = write_reports(conn, tmp_path / "reports")
    (paths,) = written.runs
    assert paths.html.parent.parent == tmp_path / "reports"
    assert paths.html.parent.name.startswith("team_run_1-")
    html = paths.html.read_text()
    assert "1,000.00" in html and "no attributed spend yet" in html
    assert "over threshold (110 % of estimate)" in html.lower()


def test_top_resources_of_the_run_largest_first_with_their_share(reports: ReportSet) -> None:
    html, markdown = _run_report(reports, BUDGETED_RUN)
    run_total = _actual(BUDGETED_RUN)
    expected = [  # i-0a1: the five compute days; the checkpoint bucket: two storage lines
        ("i-0a1", _actual(BUDGETED_RUN, "compute"), "2,560.0"),
        (CHECKPOINTS, Decimal("150.25") + Decimal("149.9999999999"), None),
        ("nat-0a1", Decimal("80.005"), None),
    ]
    section = html[html.index("<h2>Top resources of the run</h2>") :]
    section = section[: section.index("</section>")]
    assert "The largest 3 of the 3 resources" in section
    positions = []
    for resource, cost, gpu_hours in expected:
        share = f"{(cost / run_total * 100).quantize(Decimal('0.1'), rounding=ROUND_HALF_UP)} %"
        row = next(row for row in section.split("<tr>") if f">{resource}<" in row)
        assert f"{cost.quantize(Decimal('0.01'), rounding=ROUND_HALF_UP):,}" in row and share in row
        assert (gpu_hours or "—") in row
        positions.append(section.index(f">{resource}<"))
    assert positions == sorted(positions)
    assert "i-0b2" not in section  # the other run's instance
    assert "Top resources of the run" in markdown and "](charts/top_resources.svg)" in markdown


def test_every_chart_has_its_numbers_table_below_it(reports: ReportSet) -> None:
    for paths in reports.runs:
        html = paths.html.read_text()
        sections = html.split("<section>")[1:]
        with_charts = [section for section in sections if '<figure class="chart"' in section]
        assert len(with_charts) == len(paths.charts)
        for section in with_charts:
            assert section.index("<figure") < section.index("<table"), section[:80]


def test_every_axis_is_titled_with_its_unit_or_currency(reports: ReportSet) -> None:
    categorical = {"Cost category", "Step from estimate to actual", "Resource (by rank)"}
    for paths in reports.runs:
        html = paths.html.read_text()
        for svg in re.findall(r"<svg.*?</svg>", html, re.DOTALL):
            titles = re.findall(r"role-axis-title.*?<text[^>]*>([^<]+)</text>", svg, re.DOTALL)
            assert len(titles) == 2, titles
            assert any(title.endswith("(USD)") for title in titles), titles
            for title in titles:
                assert title in categorical or title.endswith(("(USD)", "(UTC)")), title


def test_cumulative_chart_shows_the_forecast_and_the_levels_in_numbers(reports: ReportSet) -> None:
    html, markdown = _run_report(reports, BUDGETED_RUN)
    actual = _actual(BUDGETED_RUN)
    forecast = actual * 31 / 15  # what the fixture's budget_variance holds: 15 of 31 days
    estimate = sum(ESTIMATES.values(), Decimal(0))
    cumulative = html[: html.index("<h2>Estimate vs actual by category</h2>")]
    assert "Forecast at completion" in cumulative.split("<table")[0]  # the legend
    for document in (cumulative, markdown):
        assert _money(forecast) in document
        assert _money(estimate * Decimal("0.8")) in document  # the warning threshold
        assert "not reached" in document  # no budget_alerts row in this warehouse


def test_threshold_crossings_in_the_run_report_and_the_summary(reports: ReportSet) -> None:
    # Cumulative spend of llm-7b-pt-r1 at the end of each day: Oct 3 2,000.335; Oct 4 4,150.92;
    # Oct 5 6,231.26; Oct 6 8,181.3834567890; Oct 7 9,881.8834567890 >= 0.8 x 12,100 = 9,680:
    # the warning threshold is first reached on 7 October; 12,100 (over) never is.
    html, markdown = _run_report(reports, BUDGETED_RUN)
    for document in (html, markdown):
        assert "warning on 2026-10-07" in document
    levels = html[html.index("<td>Warning threshold</td>") :]
    levels = levels[: levels.index("</tr>")]
    assert "9,680.00" in levels and "2026-10-07" in levels and "9,881.88" in levels
    over = html[html.index("<td>Over threshold</td>") :]
    assert "not reached" in over[: over.index("</tr>")]
    summary = reports.summary_html.read_text()
    alerts = summary[summary.index("<h2>Budget alerts</h2>") :]
    alerts = alerts[: alerts.index("</section>")]
    assert f'href="{BUDGETED_RUN}/report.html"' in alerts
    assert "<td>cost</td>" in alerts and "<td>warning</td>" in alerts and "2026-10-07" in alerts
    assert "9,680.00 USD (80.0 % of the estimate)" in alerts and "9,881.88 USD" in alerts
    assert UNBUDGETED_RUN not in alerts


def test_forecast_line_runs_from_the_spend_at_as_of_to_the_forecast_at_the_window_end() -> None:
    header = RunHeader(
        training_run="r", experiment=None, dataset_version=None, owner=None, currency="USD",
        has_budget=True, window_start=date(2026, 10, 1), window_end=date(2026, 11, 1),
        warning_threshold=Decimal("0.8"), over_threshold=Decimal(1), total_status="on_track",
        as_of=datetime(2026, 10, 11, 12), billing_periods=(date(2026, 10, 1),),
        first_charge=datetime(2026, 10, 2), last_charge=datetime(2026, 10, 4),
    )  # fmt: skip
    # 300 spent by as-of, 10.5 of 31 days: forecast 300 x 31 / 10.5 = 885.71
    total = CostLine(
        "total", Decimal(1000), Decimal(300), Decimal(-700), -0.7, "on_track",
        Decimal("885.7142857143"), None, None, None, None, None, None,
    )  # fmt: skip
    daily = [
        DailySpend(date(2026, 10, 2), "compute", Decimal(100)),
        DailySpend(date(2026, 10, 3), "compute", Decimal(200)),
    ]

    spec = cumulative_spend_chart(header, total, daily, "USD").vega_lite

    points = spec["data"]["values"]
    by_series: dict[str, list] = {}
    for point in points:
        by_series.setdefault(point["series"], []).append((point["day"], point["spend"]))
    assert by_series["Forecast at completion"] == [
        ("2026-10-11T12:00:00Z", 300.0),
        ("2026-11-01", 885.7142857143),
    ]
    actual = by_series["Actual (cumulative)"]
    assert actual[:4] == [
        ("2026-10-02", 0.0),
        ("2026-10-03", 100.0),
        ("2026-10-04", 300.0),
        ("2026-10-11T12:00:00Z", 300.0),
    ]
    assert by_series["Planned burn"][-1] == ("2026-11-01", 1000.0)


def test_planned_burn_runs_over_the_estimates_wall_clock_from_the_runs_start() -> None:
    # the demo's 7B: 164.74 planned wall-clock hours (6.86 days) from its start on 2026-10-03
    header = RunHeader(
        training_run="r", experiment=None, dataset_version=None, owner=None, currency="USD",
        has_budget=True, window_start=date(2026, 10, 1), window_end=date(2026, 11, 1),
        warning_threshold=Decimal("0.8"), over_threshold=Decimal(1), total_status="on_track",
        as_of=datetime(2026, 10, 6), billing_periods=(date(2026, 10, 1),),
        first_charge=datetime(2026, 10, 1, 6), last_charge=datetime(2026, 10, 6),
        planned_start=datetime(2026, 10, 3), planned_wall_clock_hours=Decimal("164.7352"),
    )  # fmt: skip
    total = CostLine(
        "total", Decimal("97468.70"), Decimal(45694), None, None, "warning",
        Decimal(125192), None, None, None, None, None, None,
    )  # fmt: skip

    spec = cumulative_spend_chart(header, total, [DailySpend(date(2026, 10, 3), "compute", Decimal(45694))], "USD")

    planned = [
        (point["day"], point["spend"])
        for point in spec.vega_lite["data"]["values"]
        if point["series"] == "Planned burn"
    ]
    # 164.7352 h = 6 days 20 h 44 min 6.72 s after the start
    assert planned == [("2026-10-03T00:00:00Z", 0.0), ("2026-10-09T20:44:06.720000Z", 97468.7)]


def test_unchanged_warehouse_keeps_the_reports_and_a_change_rewrites_them(tmp_path: Path) -> None:
    first = _write(tmp_path)
    written_at = {path: path.stat().st_mtime_ns for path in first.paths}
    with duckdb.connect(str(tmp_path / "warehouse.duckdb"), read_only=True) as conn:
        again = write_reports(conn, tmp_path / "reports")
        assert again.runs == first.runs and again.rendered == () and first.rendered == (UNBUDGETED_RUN, BUDGETED_RUN)
        assert {path: path.stat().st_mtime_ns for path in again.paths} == written_at
        (tmp_path / "reports" / REPORT_SET_FILE).unlink()
        per_run = write_reports(conn, tmp_path / "reports")
    assert all(run.html.stat().st_mtime_ns == written_at[run.html] for run in per_run.runs)
    assert per_run.rendered == () and per_run.rendered_line == "rendered 0 of 2 run reports, 2 unchanged"

    with duckdb.connect(str(tmp_path / "warehouse.duckdb")) as conn:
        conn.execute(
            "update cost_allocations set effective_cost = effective_cost + 1 where training_run = ?", [UNBUDGETED_RUN]
        )
    with duckdb.connect(str(tmp_path / "warehouse.duckdb"), read_only=True) as conn:
        changed = write_reports(conn, tmp_path / "reports")
    changed_report = next(run for run in changed.runs if run.training_run == UNBUDGETED_RUN)
    assert changed_report.html.stat().st_mtime_ns > written_at[changed_report.html]


def _sql_copy(tmp_path: Path) -> Path:
    """A copy of sql/ for a test to change: the reports' digest reads it, the reports still run
    the product's SQL."""
    sql_dir = tmp_path / "sql"
    shutil.copytree(report_set.SQL_DIR, sql_dir)
    return sql_dir


@pytest.mark.parametrize(
    "sql_file",
    [
        *(f"reports/{path.name}" for path in sorted(report_set.SQL_DIR.glob("reports/*.sql"))),
        *(f"{path}.sql" for path in report_set.REPORTS_OTHER_SQL),
    ],
)
def test_a_change_to_any_sql_the_reports_run_changes_their_code_digest(
    sql_file: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sql_dir = _sql_copy(tmp_path)
    monkeypatch.setattr(report_set, "SQL_DIR", sql_dir)
    before = report_set.code_digest(png=False)
    with (sql_dir / sql_file).open("a") as file:
        file.write("-- a fix\n")
    assert report_set.code_digest(png=False) != before


def test_every_sql_file_the_reports_read_is_in_their_code_digest() -> None:
    read = {
        f"{path}.sql"
        for module in report_set.REPORTS_PACKAGE_DIR.glob("*.py")
        for path in re.findall(r'read_sql\(\s*"([^"]+)"', module.read_text())
    }
    covered = {
        str(path.relative_to(report_set.SQL_DIR)) for path in report_set.report_code_files() if path.suffix == ".sql"
    }
    assert read and read <= covered


def test_a_fix_to_a_report_query_alone_rewrites_the_reports(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    first = _write(tmp_path)
    sql_dir = _sql_copy(tmp_path)
    monkeypatch.setattr(report_set, "SQL_DIR", sql_dir)
    with (sql_dir / "reports" / "run_alerts.sql").open("a") as file:
        file.write("-- a fix\n")
    with duckdb.connect(str(tmp_path / "warehouse.duckdb"), read_only=True) as conn:
        again = write_reports(conn, tmp_path / "reports")
    assert again.rendered == first.rendered == (UNBUDGETED_RUN, BUDGETED_RUN)
    assert again.rendered_line == "rendered 2 of 2 run reports, 0 unchanged"


def test_revised_budgets_rewrite_exactly_those_runs_reports_and_the_summary(tmp_path: Path) -> None:
    runs = [f"llm-{index:02d}" for index in range(12)]
    revised = runs[1::2][:5] + runs[:1]
    conn = _budget_only_warehouse(tmp_path / "warehouse.duckdb", runs)
    out = tmp_path / "reports"
    first = write_reports(conn, out)
    assert first.rendered == tuple(runs)
    written_at = {path: path.stat().st_mtime_ns for path in first.paths}
    conn.execute(
        "update budget_baselines set estimated_cost = 1250 where list_contains($runs, training_run)", {"runs": revised}
    )
    second = write_reports(conn, out)
    assert second.rendered == tuple(sorted(revised))
    assert second.rendered_line == "rendered 6 of 12 run reports, 6 unchanged"
    rewritten = {path for path in second.paths if path.stat().st_mtime_ns != written_at[path]}
    expected = {
        path for run in second.runs if run.training_run in revised for path in (run.html, run.markdown, *run.charts)
    }
    assert rewritten == expected | {second.summary_html, second.summary_markdown}
    for run in second.runs:
        assert ("1,250.00" in run.html.read_text()) == (run.training_run in revised)


def test_charts_rendered_by_worker_processes_equal_the_inline_ones(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "inline").mkdir()
    (tmp_path / "pooled").mkdir()
    monkeypatch.setattr(chart_rendering, "POOL_FROM_RUNS", 10**6)
    inline = _write(tmp_path / "inline")
    monkeypatch.setattr(chart_rendering, "POOL_FROM_RUNS", 1)
    monkeypatch.setattr(chart_rendering.os, "sched_getaffinity", lambda _pid: {0, 1})
    pooled = _write(tmp_path / "pooled")

    inline_files = {path.relative_to(tmp_path / "inline"): path.read_bytes() for path in inline.paths}
    pooled_files = {path.relative_to(tmp_path / "pooled"): path.read_bytes() for path in pooled.paths}
    assert len(inline_files) == 2 + sum(2 + len(run.charts) for run in inline.runs) == 15
    assert pooled_files == inline_files


def test_every_chart_of_the_reports_is_valid_vega_lite(tmp_path: Path) -> None:
    warehouse = _build_warehouse(tmp_path / "warehouse.duckdb")
    validator = jsonschema.Draft7Validator(vega_lite_schema.load_schema())
    names = []
    with duckdb.connect(str(warehouse)) as conn:
        overviews = load_overviews(conn, known_runs(conn))
        details = load_details(conn, list(overviews.values()), load_reconciliation(conn))
        for training_run, overview in overviews.items():
            for spec in run_charts(overview, details[training_run]):
                errors = [
                    f"{list(error.absolute_path)}: {error.message}" for error in validator.iter_errors(spec.vega_lite)
                ]
                assert errors == [], f"{training_run} {spec.name}"
                assert spec.vega_lite["$schema"] == altair.SCHEMA_URL
                names.append(spec.name)
    assert sorted(set(names)) == sorted(
        ["cumulative_spend", "estimate_vs_actual", "daily_spend", "variance_waterfall", "top_resources"]
    )


def test_a_chart_a_worker_cannot_render_fails_alone() -> None:
    renderer = chart_rendering.WorkerRenderer(workers=1)
    try:
        bad = renderer.submit({"mark": "no-such-mark", "data": {"values": [{"a": 1}]}})
        good = renderer.submit({"mark": "bar", "data": {"values": [{"a": 1}]}, "encoding": {"x": {"field": "a"}}})
        with pytest.raises(
            RuntimeError, match="rendering a chart failed: ValueError: Vega-Lite to SVG conversion failed"
        ):
            bad.result()
        svg, png = good.result()
    finally:
        renderer.close()
    assert svg.startswith("<svg") and png is None


def test_a_worker_asked_for_pngs_rasterizes_each_chart() -> None:
    renderer = chart_rendering.WorkerRenderer(workers=1, png=True)
    try:
        svg, png = renderer.submit(
            {"mark": "bar", "data": {"values": [{"a": 1}]}, "encoding": {"x": {"field": "a"}}}
        ).result()
    finally:
        renderer.close()
    assert svg.startswith("<svg") and png.startswith(PNG_SIGNATURE)


def _budget_only_warehouse(path: Path, runs: list[str]) -> duckdb.DuckDBPyConnection:
    """A warehouse holding a compute budget of 1,000 USD for each run, and no spend."""
    conn = duckdb.connect(str(path))
    create_schema(conn)
    for run in runs:
        conn.execute(
            """
            insert into budget_baselines (
                training_run, cost_category, currency, estimated_cost, estimated_gpu_hours,
                estimated_rate, thresholds, "window", budget_file
            ) values ($run, 'compute', 'USD', 1000, 100, 10,
                {'warning': 0.8, 'over': 1.1}, {'start': date '2026-10-01', 'end': date '2026-10-20'},
                'budgets/x.yaml')
            """,
            {"run": run},
        )
    return conn


def test_run_ids_named_like_the_summary_get_their_own_folder_and_links(tmp_path: Path) -> None:
    # Run ids are tag values: one may be the name of a file the reports folder holds itself.
    runs = ["summary.html", "summary.md", "Summary.HTML", "llm-7b-pt-r1", ""]
    conn = _budget_only_warehouse(tmp_path / "warehouse.duckdb", runs)
    out = tmp_path / "reports"
    for _night in range(2):  # the next night finds the folder the first one wrote
        written = write_reports(conn, out)
        conn.execute("update budget_baselines set estimated_cost = estimated_cost + 1")
    folders = {paths.training_run: paths.html.parent.relative_to(out).as_posix() for paths in written.runs}
    assert folders["llm-7b-pt-r1"] == "llm-7b-pt-r1"
    for run in runs[:3]:
        assert re.fullmatch(re.escape(run) + r"-[0-9a-f]{8}", folders[run]), folders
    assert re.fullmatch(r"run-[0-9a-f]{8}", folders[""]), folders  # not the reports folder itself
    assert (out / "summary.html").is_file() and (out / "summary.md").is_file()
    html, markdown = (out / "summary.html").read_text(), (out / "summary.md").read_text()
    for folder in folders.values():
        assert (out / folder / "report.html").is_file()
        assert f'href="{folder}/report.html"' in html
        assert f"]({folder}/report.md)" in markdown
