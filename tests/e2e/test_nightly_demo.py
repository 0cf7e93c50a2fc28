"""The whole nightly job on the demo data set: exact totals against the raw export files."""

import json
import re
from collections import defaultdict
from datetime import UTC, date, datetime
from decimal import ROUND_HALF_EVEN, ROUND_HALF_UP, Decimal
from fnmatch import fnmatchcase
from html import escape
from pathlib import Path

import pyarrow.parquet as pq
import pytest
import yaml

from pipelines.attribution.settings import DEFAULT_DIMENSIONS
from pipelines.nightly import run_nightly
from pipelines.reports.data import load_overviews
from pipelines.warehouse.sql import read_sql
from tests.support.demo_lake import SharedDemo, copy_demo
from tests.support.lake import lake_of, reading

TEN_DECIMALS = Decimal("1e-10")
UNUSED_FEE_TYPES = ("SavingsPlanRecurringFee", "RIFee")


def money(value: object) -> Decimal:
    """The warehouse's money rule, computed independently: the number's shortest text, half-even."""
    if value is None or value == "":
        return Decimal(0)
    return Decimal(repr(value) if isinstance(value, float) else str(value)).quantize(TEN_DECIMALS, ROUND_HALF_EVEN)


def normalized(key: str) -> str:
    key = re.sub(r"[-\s:]", "_", key.strip().lower())
    return key[len("user_") :] if key.startswith("user_") else key


def training_run_of(tags: dict[str, str]) -> str | None:
    by_key = {normalized(k): v.strip() for k, v in tags.items() if v and v.strip()}
    for alias in DEFAULT_DIMENSIONS["training_run"]:
        if normalized(alias) in by_key:
            return by_key[normalized(alias)]
    return None


def aws_effective(row: dict) -> Decimal:
    """The amortization rule (docs/semantics.md), row by row: a commitment fee's unused part counts
    as the fee's (the warehouse puts it on an Unused row beside the fee)."""
    kind = row["line_item_line_item_type"]
    if kind == "SavingsPlanCoveredUsage":
        return money(row["savings_plan_savings_plan_effective_cost"])
    if kind == "SavingsPlanRecurringFee":
        return money(row["savings_plan_total_commitment_to_date"]) - money(row["savings_plan_used_commitment"])
    if kind in ("SavingsPlanNegation", "SavingsPlanUpfrontFee"):
        return Decimal(0)
    if kind == "DiscountedUsage":
        return money(row["reservation_effective_cost"])
    if kind == "RIFee":
        return money(row["reservation_unused_amortized_upfront_fee_for_billing_period"]) + money(
            row["reservation_unused_recurring_fee"]
        )
    if kind == "Fee" and row.get("reservation_reservation_a_r_n"):
        return Decimal(0)
    return (
        money(row["line_item_net_unblended_cost"])
        if row["line_item_net_unblended_cost"] is not None
        else money(row["line_item_unblended_cost"])
    )


def registry_run_of(root: Path, resource_id: str | None, start: datetime, storage: bool) -> str | None:
    """The registered run whose resource globs and [start, end) window hold the line, a storage
    line after the window too (lines of the demo never cross a window edge, and no two runs
    register one resource)."""
    runs = yaml.safe_load((root / ".runledger" / "demo" / "runs.yaml").read_text())["runs"]
    for run in runs:
        begins, ends = (run[k].astimezone(UTC).replace(tzinfo=None) for k in ("start", "end"))
        held = begins <= start and (storage or start < ends)
        if resource_id and any(fnmatchcase(resource_id, p) for p in run["resources"]) and held:
            return run["id"]
    return None


def gcp_time(text: str) -> datetime:
    return datetime.fromisoformat(text.removesuffix(" UTC"))


def raw_expectations(root: Path) -> tuple[dict, dict, set[str]]:
    """Per (source, period): rows (a commitment fee with an unused part has a derived row beside
    it), billed, effective; per (method, run): effective; files listed."""
    periods: dict[tuple[str, str], list] = defaultdict(lambda: [0, Decimal(0), Decimal(0)])
    runs: dict[tuple[str, str], Decimal] = defaultdict(Decimal)
    listed: set[str] = set()
    export = root / ".runledger" / "demo" / "aws" / "cur2-demo"
    for manifest in sorted(export.glob("metadata/*/*-Manifest.json")):
        period = manifest.parent.name.split("=")[1]
        for uri in json.loads(manifest.read_text())["dataFiles"]:
            path = export / "data" / uri.split("/data/", 1)[1]
            listed.add(str(path))
            for row in pq.read_table(path).to_pylist():
                billed = money(
                    row["line_item_net_unblended_cost"]
                    if row["line_item_net_unblended_cost"] is not None
                    else row["line_item_unblended_cost"]
                )
                effective = aws_effective(row)
                entry = periods[("aws-main", period)]
                unused_row = row["line_item_line_item_type"] in UNUSED_FEE_TYPES and effective != 0
                entry[0] += 1 + unused_row
                entry[1] += billed
                entry[2] += effective
                run = training_run_of(dict(row["resource_tags"] or []))
                if run:
                    runs[("tag", run)] += effective
                elif run := registry_run_of(
                    root,
                    row["line_item_resource_id"],
                    row["line_item_usage_start_date"],
                    row["product_product_family"] == "Storage",
                ):
                    runs[("registry", run)] += effective
    for file in sorted((root / ".runledger" / "demo" / "gcp").rglob("*.json*")):
        for line in file.read_text().splitlines():
            row = json.loads(line)
            month = row["invoice"]["month"]
            net = money(row["cost"]) + sum((money(c["amount"]) for c in row.get("credits") or []), Decimal(0))
            entry = periods[("gcp-main", f"{month[:4]}-{month[4:]}")]
            entry[0] += 1
            entry[1] += net
            entry[2] += net
            labels = {label["key"]: label["value"] for label in row.get("labels") or []}
            project_labels = {label["key"]: label["value"] for label in (row.get("project") or {}).get("labels") or []}
            run = training_run_of({**project_labels, **labels})
            resource = (row.get("resource") or {}).get("global_name") or (row.get("resource") or {}).get("name")
            if run:
                runs[("tag", run)] += net
            elif run := registry_run_of(
                root, resource, gcp_time(row["usage_start_time"]), row["service"]["description"] == "Cloud Storage"
            ):
                runs[("registry", run)] += net
    return {key: tuple(value) for key, value in periods.items()}, dict(runs), listed


@pytest.fixture(scope="module")
def demo(shared_demo: SharedDemo) -> tuple[Path, Path]:
    """The session's demo after its night, read in place."""
    return shared_demo.root, lake_of(shared_demo.root)


@pytest.fixture
def demo_copy(shared_demo: SharedDemo, tmp_path: Path) -> tuple[Path, Path]:
    """A copy of the demo after its night, reading the inputs its lake loaded."""
    root = copy_demo(shared_demo, tmp_path / "demo", shared_inputs=True).parent
    return root, lake_of(root)


def query(warehouse: Path, sql: str) -> list[tuple]:
    with reading(warehouse) as conn:
        return conn.execute(sql).fetchall()


def test_every_source_period_matches_the_raw_files(demo: tuple[Path, Path]) -> None:
    root, warehouse = demo
    expected, _, _ = raw_expectations(root)
    loaded = query(
        warehouse,
        "select x_SourceName, strftime(date_trunc('month', BillingPeriodStart), '%Y-%m'), count(*), "
        "sum(BilledCost), sum(EffectiveCost) from focus_line_items group by all",
    )
    assert {(s, p): (n, b, e) for s, p, n, b, e in loaded} == expected
    assert len(expected) == 4 and sum(n for n, _, _ in expected.values()) >= 4000


def test_only_the_files_the_manifest_lists_are_read(demo: tuple[Path, Path]) -> None:
    root, warehouse = demo
    _, _, listed = raw_expectations(root)
    read = {
        row[0]
        for row in query(
            warehouse, "select distinct x_SourceFile from focus_line_items where x_SourceName = 'aws-main'"
        )
    }
    all_parquet = {str(p) for p in (root / ".runledger" / "demo" / "aws").rglob("*.parquet")}
    assert read == listed
    assert all_parquet - listed, "the demo keeps an older delivery beside the latest one"


def test_per_run_cost_by_tag_and_by_registry_matches_the_raw_rows(demo: tuple[Path, Path]) -> None:
    root, warehouse = demo
    _, runs, _ = raw_expectations(root)
    allocated = query(
        warehouse,
        "select allocation_method, training_run, sum(effective_cost) from cost_allocations "
        "where training_run is not null and allocation_method <> 'cluster' group by all",
    )
    assert {(method, run): cost for method, run, cost in allocated} == runs
    # the p5-cluster's nodes (4 x 72 hours at 55.04) go to its jobs and its idle capacity
    (cluster,) = query(
        warehouse,
        "select sum(effective_cost) filter (where allocation_method = 'cluster'), "
        "sum(effective_cost) filter (where allocation_method = 'idle_capacity') "
        "from cost_allocations where cluster = 'p5-cluster'",
    )
    assert cluster == (Decimal("10419.76"), Decimal("5431.76"))
    assert {run for _, run in runs} == {"llm-7b-pt-r1", "llm-13b-ft-r2", "llm-3b-pt-gcp"}
    assert runs[("registry", "llm-7b-pt-r1")] > 0, "the demo leaves two 7B nodes untagged"


def test_checkpoint_storage_after_the_window_stays_the_runs(demo: tuple[Path, Path]) -> None:
    """The 7B run's untagged bucket: the registry's within the run's window, and after it, as
    storage the run left behind, still the run's (before: unattributed, 87.15 on the worklist)."""
    _, warehouse = demo
    rows = query(
        warehouse,
        "select training_run, allocation_rule, min(ChargePeriodStart), max(ChargePeriodStart), "
        "round(sum(effective_cost), 2) from cost_allocations where ResourceId = 'ckpt-7b' group by all order by 3",
    )
    (run, rule, _, last_in_window, _), (later_run, later_rule, first_after, _, kept) = rows
    assert (run, rule, later_run, later_rule) == (
        "llm-7b-pt-r1",
        "registry ckpt-7b",
        "llm-7b-pt-r1",
        "registry after window",
    )
    assert last_in_window < datetime(2026, 10, 11) <= first_after
    assert kept == Decimal("87.15")


def test_reconciliation_is_zero_and_registry_fills_dimensions(demo: tuple[Path, Path]) -> None:
    _, warehouse = demo
    rows = query(
        warehouse,
        "select rows_raw_focus_diff, rows_focus_allocated_diff, billed_raw_focus_diff, "
        "billed_focus_allocated_diff, effective_focus_allocated_diff from reconciliation",
    )
    assert len(rows) == 4 and all(value == 0 for row in rows for value in row)
    missing = query(
        warehouse,
        "select count(*) from cost_allocations where training_run in (select training_run from run_registry) "
        "and (experiment is null or dataset_version is null)",
    )
    assert missing == [(0,)]


def test_each_unused_commitment_is_a_row_of_its_own_counted_by_the_reconciliation(demo: tuple[Path, Path]) -> None:
    root, warehouse = demo
    export = root / ".runledger" / "demo" / "aws" / "cur2-demo"
    unused: dict[str, tuple[int, Decimal]] = {}
    for manifest in sorted(export.glob("metadata/*/*-Manifest.json")):
        fees = [
            aws_effective(row)
            for uri in json.loads(manifest.read_text())["dataFiles"]
            for row in pq.read_table(export / "data" / uri.split("/data/", 1)[1]).to_pylist()
            if row["line_item_line_item_type"] in UNUSED_FEE_TYPES
        ]
        unused[manifest.parent.name.split("=")[1]] = (sum(fee != 0 for fee in fees), sum(fees, Decimal(0)))
    # October: the Savings Plan's idle hours before its term ends and the RI month; November: the RI month
    assert unused["2026-10"][0] > 1 and unused["2026-11"][0] == 1
    derived = query(
        warehouse,
        "select strftime(billing_period, '%Y-%m'), derived_rows, raw_rows + derived_rows = focus_rows "
        "from reconciliation where source_name = 'aws-main'",
    )
    assert {period: (rows, exact) for period, rows, exact in derived} == {
        period: (count, True) for period, (count, _) in unused.items()
    }
    rows = query(
        warehouse,
        "select strftime(BillingPeriodStart, '%Y-%m'), count(*), sum(BilledCost), sum(EffectiveCost), "
        "count(*) filter (where ChargeCategory = 'Usage' and x_LineItemKey = x_DerivedFrom || '|unused') "
        "from focus_line_items where CommitmentDiscountStatus = 'Unused' group by all",
    )
    assert {p: (n, b, e, k) for p, n, b, e, k in rows} == {
        period: (count, Decimal(0), amount, count) for period, (count, amount) in unused.items()
    }
    fees = query(
        warehouse,
        "select sum(EffectiveCost) from focus_line_items where ChargeCategory = 'Purchase' "
        "and CommitmentDiscountId is not null",
    )
    assert fees == [(Decimal(0),)]


def test_budget_variance_explains_the_gap_exactly(demo: tuple[Path, Path]) -> None:
    _, warehouse = demo
    compute = query(
        warehouse,
        "select training_run, variance, rate_variance, usage_variance, actual_cost, estimated_cost "
        "from budget_variance where cost_category = 'compute'",
    )
    assert len(compute) == 3
    for _, variance, rate_variance, usage_variance, actual, estimated in compute:
        assert rate_variance + usage_variance == variance == actual - estimated
    totals = dict(
        query(warehouse, "select training_run, actual_cost from budget_variance where cost_category = 'total'")
    )
    by_run = dict(
        query(
            warehouse,
            "select training_run, sum(effective_cost) from run_costs "
            "where training_run in (select training_run from budget_baselines) group by 1",
        )
    )
    assert totals == by_run


def test_reports_show_the_runs_numbers(demo: tuple[Path, Path]) -> None:
    root, warehouse = demo
    for run, actual in query(
        warehouse, "select training_run, actual_cost from budget_variance where cost_category = 'total'"
    ):
        html = (root / ".runledger" / "reports" / run / "report.html").read_text()
        markdown = (root / ".runledger" / "reports" / run / "report.md").read_text()
        shown = f"{actual.quantize(Decimal('0.01')):,}"
        assert shown in html and shown in markdown
        assert html.count("<svg") >= 4 and "https://" not in html.replace("http://www.w3.org", "")
    assert (root / ".runledger" / "reports" / "summary.html").is_file()


def test_a_second_run_changes_nothing(demo_copy: tuple[Path, Path]) -> None:
    root, warehouse = demo_copy
    tables = {
        "focus_line_items": "select * exclude (x_IngestedAt) from focus_line_items order by x_LineItemKey",
        "cost_allocations": (
            "select * from cost_allocations order by x_LineItemKey, training_run, job_id, allocation_method"
        ),
        "budget_variance": "select * from budget_variance order by training_run, cost_category",
        "run_costs": "select * from run_costs order by all",
        "waste": "select * from waste order by all",
        "run_progress": "select * from run_progress order by training_run",
        "run_pricing": "select * from run_pricing order by all",
        "variance_causes": "select * from variance_causes order by all",
    }
    before = {name: query(warehouse, sql) for name, sql in tables.items()}
    run_nightly(root / "runledger.yaml", echo=lambda line: None)
    after = {name: query(warehouse, sql) for name, sql in tables.items()}
    assert after == before
    # GCP periods are rebuilt each run; the AWS deliveries are unchanged, so they are not reloaded.
    assert query(warehouse, "select source_name, status, count(*) from loads group by all order by all") == [
        ("aws-main", "loaded", 2),
        ("aws-main", "unchanged", 2),
        ("gcp-main", "loaded", 4),
    ]


def test_budget_alerts_mark_the_first_day_over_each_threshold(demo: tuple[Path, Path]) -> None:
    root, warehouse = demo
    alerts = {
        (run, threshold): crossed_on
        for run, threshold, crossed_on in query(
            warehouse, "select training_run, threshold, crossed_on from budget_alerts where kind = 'cost'"
        )
    }
    expected = {}
    for path in sorted((root / ".runledger" / "demo" / "budgets").glob("*.yaml")):
        budget = yaml.safe_load(path.read_text())
        if "scope" in budget:  # a group budget: test_group_budgets_of_the_sweep_and_the_platform_team...
            continue
        run = budget["training_run"]
        (estimate,) = query(
            warehouse, f"select sum(estimated_cost) from budget_baselines where training_run = '{run}'"
        )[0]
        lines = query(
            warehouse,
            f"select ChargePeriodStart, effective_cost from cost_allocations where training_run = '{run}'",
        )
        per_day: dict = defaultdict(Decimal)
        for charge_start, cost in lines:
            per_day[charge_start.date()] += cost
        cumulative = Decimal(0)
        for day in sorted(per_day):
            cumulative += per_day[day]
            for threshold, fraction in budget["thresholds"].items():
                if cumulative >= estimate * Decimal(str(fraction)) and (run, threshold) not in expected:
                    expected[run, threshold] = day
    assert alerts == expected
    assert ("llm-7b-pt-r1", "over") in alerts  # the story: the 7B run ends ~20 % over budget
    report = (root / ".runledger" / "reports" / "llm-7b-pt-r1" / "report.html").read_text()
    for (run, threshold), day in alerts.items():
        if run == "llm-7b-pt-r1":
            assert f"{threshold} on {day:%Y-%m-%d}" in report


def test_actual_effective_mfu_of_the_7b_run(demo: tuple[Path, Path]) -> None:
    _, warehouse = demo
    # 6 x 7e9 x 6.5e11 FLOPs at 989 TFLOP/s per H100 over the GPU-hours actually billed
    ((gpu_hours,),) = query(
        warehouse,
        "select sum(gpu_hours) from cost_allocations where training_run = 'llm-7b-pt-r1' "
        "and x_CostCategory = 'compute'",
    )
    ((estimated, actual, throughput),) = query(
        warehouse,
        "select estimated_effective_mfu, actual_effective_mfu, actual_tokens_per_gpu_second from budget_variance "
        "where training_run = 'llm-7b-pt-r1' and cost_category = 'compute'",
    )
    flops = Decimal(6) * Decimal("7e9") * Decimal("6.5e11")
    assert abs(actual - flops / (Decimal("989e12") * 3600 * gpu_hours)) < Decimal("1e-9")
    assert abs(throughput - Decimal("6.5e11") / (gpu_hours * 3600)) < Decimal("1e-9")
    assert abs(estimated - Decimal("0.40") / Decimal("1.10")) < Decimal("1e-9")
    assert actual < estimated  # the story: more GPU-hours than the budget assumed


def test_run_costs_name_each_runs_registry_dimensions(demo: tuple[Path, Path]) -> None:
    root, warehouse = demo
    registry = yaml.safe_load((root / ".runledger" / "demo" / "runs.yaml").read_text())["runs"]
    expected = sorted((run["id"], run["experiment"], run["dataset_version"], run["owner"]) for run in registry)
    rows = query(
        warehouse,
        "select distinct training_run, experiment, dataset_version, owner from run_costs "
        "where training_run in (select training_run from run_registry) order by 1",
    )
    # one set of dimensions per run, although some GCP lines carry the project label team=ml-platform
    assert rows == expected


def test_run_reports_name_the_dimensions_run_costs_names(demo: tuple[Path, Path]) -> None:
    # The 3B run's GCP lines carry team=ml-platform (an owner key) besides its own owner tag; its
    # report names the registry's owner, as run_costs does, however the allocations are stored.
    root, warehouse = demo
    expected = query(
        warehouse, "select distinct training_run, experiment, dataset_version, owner from run_costs order by 1"
    )
    with reading(warehouse) as conn:
        overviews = load_overviews(conn, [run for run, *_ in expected])
    headers = [(run, o.header.experiment, o.header.dataset_version, o.header.owner) for run, o in overviews.items()]
    assert headers == expected
    assert overviews["llm-3b-pt-gcp"].header.owner == "carol"
    report = (root / ".runledger" / "reports" / "llm-3b-pt-gcp" / "report.md").read_text()
    assert "- **Owner:** carol" in report


def test_waste_of_the_demo_runs(demo: tuple[Path, Path]) -> None:
    """7B: two crashes, a six-hour idle tail, 30 checkpoints kept where the budget planned 5,
    checkpoint replication to us-west-2; 3B: 45 checkpoints kept (10 planned), egress to EMEA."""
    _, warehouse = demo
    by_kind = {
        (run, kind): (cost, gpu_hours)
        for run, kind, cost, gpu_hours in query(
            warehouse,
            "select training_run, kind, round(sum(effective_cost), 2), sum(gpu_hours) from waste group by all",
        )
    }
    assert {key: cost for key, (cost, _) in by_kind.items()} == {
        ("llm-7b-pt-r1", "idle_after_run"): Decimal("3754.93"),
        ("llm-7b-pt-r1", "recompute_after_failure"): Decimal("5123.91"),
        # 25 of its 30 checkpoints beyond the budget's 5: 7.55 in its window, 72.63 after it
        ("llm-7b-pt-r1", "checkpoint_retention"): Decimal("80.18"),
        ("llm-7b-pt-r1", "cross_region_transfer"): Decimal("59.73"),
        ("llm-3b-pt-gcp", "checkpoint_retention"): Decimal("36.33"),
        ("llm-3b-pt-gcp", "cross_region_transfer"): Decimal("87.33"),
        # its telemetry day (tests/e2e/test_demo_telemetry.py)
        ("llm-7b-pt-r1", "data_loading_stall"): Decimal("1490.59"),
        ("llm-7b-pt-r1", "low_utilization"): Decimal("929.29"),
    }
    # 16 nodes x 8 GPUs idle from the 12:00 end event to 18:00
    assert by_kind[("llm-7b-pt-r1", "idle_after_run")][1] == 16 * 8 * 6
    # crashes at 09:30 and 16:45, 3.5 and 4.75 hours after the last checkpoint, on 128 GPUs,
    # priced at the run's compute effective cost per GPU-hour
    ((compute_cost, compute_gpu_hours),) = query(
        warehouse,
        "select sum(effective_cost), sum(gpu_hours) from run_costs "
        "where training_run = 'llm-7b-pt-r1' and cost_category = 'compute'",
    )
    recompute = query(
        warehouse,
        "select gpu_hours, effective_cost from waste where kind = 'recompute_after_failure' order by gpu_hours",
    )
    assert recompute == [
        (Decimal(448), (448 * compute_cost / compute_gpu_hours).quantize(Decimal("1e-10"), rounding=ROUND_HALF_UP)),
        (Decimal(608), (608 * compute_cost / compute_gpu_hours).quantize(Decimal("1e-10"), rounding=ROUND_HALF_UP)),
    ]
    over = query(
        warehouse,
        "select training_run from run_costs group by training_run "
        "having sum(effective_cost) < coalesce((select sum(effective_cost) from waste w "
        "where w.training_run = run_costs.training_run), 0)",
    )
    assert over == []


def test_reports_show_the_waste(demo: tuple[Path, Path]) -> None:
    root, _ = demo
    reports = root / ".runledger" / "reports"
    markdown = (reports / "llm-7b-pt-r1" / "report.md").read_text()
    assert "## Waste" in markdown and "![Waste by kind](charts/waste_by_kind.svg)" in markdown
    assert (reports / "llm-7b-pt-r1" / "charts" / "waste_by_kind.svg").read_text().startswith("<svg")
    # the waste and the waterfall price the same hours differently, and each table says how
    assert "| idle after run (as billed) | 34 | 3,754.93 | 768.0 | 3.2 % |" in markdown
    assert "| recompute after failure (at the run's actual rate) | 2 | 5,123.91 | 1,056.0 | 4.4 % |" in markdown
    assert (
        "The variance waterfall prices the same hours at the estimated rate: idle after the end +3,504.00 "
        "(768.0 GPU-hours), recompute after failures +4,818.00 (1,056.0 GPU-hours)."
    ) in markdown
    assert "does not change the amounts above" in markdown
    assert (
        '<h2>Waste</h2>\n<figure class="chart" role="img" aria-label="Waste by kind"><svg'
        in (reports / "llm-7b-pt-r1" / "report.html").read_text()
    )
    summary = (reports / "summary.md").read_text()
    ranking = summary[summary.index("## Waste by run and owner") :]
    assert ranking.index("llm-7b-pt-r1") < ranking.index("llm-3b-pt-gcp") < ranking.index("llm-13b-ft-r2")
    assert "| 1 | alice | 1 | USD | 117,138.71 | 11,438.63 | 9.8 % |" in ranking


def test_the_demos_untagged_share_counts_only_what_tags_could_move(demo: tuple[Path, Path]) -> None:
    """Before, every cost with no run counted as untagged: 32.6% of October and 38.3% of November,
    above the 25% threshold. Most of it is commitment fees, support and tax: the untagged
    resources (the dev instance, the NAT gateway, the shared bucket, the sandbox VM) are 0.79% and
    2.98%. The p5-cluster's nodes are split among its jobs and its idle capacity, which is the
    cluster's: on no tagging worklist."""
    _, warehouse = demo
    with reading(warehouse) as conn:
        shares = conn.execute(read_sql("marts/unattributed_costs", "share")).fetchall()
        kinds = conn.execute(
            "select strftime(billing_period, '%Y-%m'), spend_kind, sum(effective_cost), "
            "list(distinct commitment order by commitment) filter (where commitment is not null) "
            "from unattributed_costs group by all order by all"
        ).fetchall()
    assert [(f"{p:%Y-%m}", total, unattributed, untagged) for p, _, total, unattributed, _, untagged, _ in shares] == [
        # the 7B run's checkpoint bucket after its window is the run's: 47.334 and 39.82 less than before
        ("2026-10", Decimal("234641.7137519073"), Decimal("76384.2011736702"), Decimal("1810.4729336702")),
        # November: with the support and tax the p5-cluster's nodes add
        ("2026-11", Decimal("72261.1864566182"), Decimal("27662.9855243826"), Decimal("2116.5362943826")),
    ]
    assert [(round(before, 3), round(after, 4)) for *_, before, _, after in shares] == [
        (0.326, 0.0077),
        (0.383, 0.0293),
    ]
    reservation = "arn:aws:ec2:us-east-1:444455556666:reserved-instances/7c3e9a1b-2f4d-4b8e-a6c5-0d1e2f3a4b5c"
    savings_plan = query(
        warehouse,
        "select distinct CommitmentDiscountId from focus_line_items where CommitmentDiscountType = 'Savings Plan'",
    )[0][0]
    assert kinds == [
        ("2026-10", "commitment", Decimal("56121.36"), sorted([reservation, savings_plan])),
        ("2026-10", "credit", Decimal("-5000"), None),
        ("2026-10", "no resource", Decimal("304.85824"), None),
        ("2026-10", "resource", Decimal("1810.4729336702"), None),
        ("2026-10", "support", Decimal("10188.83"), None),
        ("2026-10", "tax", Decimal("12958.68"), None),
        ("2026-11", "commitment", Decimal("21705.60"), [reservation]),
        ("2026-11", "credit", Decimal("-2500"), None),
        ("2026-11", "no resource", Decimal("173.00923"), None),
        ("2026-11", "resource", Decimal("2116.5362943826"), None),
        ("2026-11", "support", Decimal("2871.30"), None),
        ("2026-11", "tax", Decimal("3296.54"), None),
    ]


def test_the_fully_loaded_costs_of_a_period_sum_to_its_total(demo: tuple[Path, Path]) -> None:
    """A third of October's effective spend (76,384.20 of 234,641.71) belongs to no run: each run's
    fully loaded cost adds its share of it, kind by kind, and October's fully loaded costs sum to
    October's total exactly. Each kind's shares sum to its unattributed spend: the p5-cluster's
    idle capacity (November) to the runs that held the cluster, the rest among AWS's runs and
    GCP's run."""
    root, warehouse = demo
    totals = dict(
        query(
            warehouse,
            "select strftime(BillingPeriodStart, '%Y-%m'), sum(EffectiveCost) from focus_line_items group by all",
        )
    )
    loaded = query(
        warehouse,
        "select strftime(billing_period, '%Y-%m'), sum(direct_cost), sum(idle_capacity_share), "
        "sum(unused_commitment_share), sum(tax_share), sum(support_share), sum(other_unattributed_share), "
        "sum(fully_loaded_cost) from run_costs_fully_loaded group by all order by all",
    )
    assert [(period, fully_loaded) for period, *_, fully_loaded in loaded] == [
        ("2026-10", totals["2026-10"]),
        ("2026-11", totals["2026-11"]),
    ]
    assert totals["2026-10"] == Decimal("234641.7137519073")
    d = Decimal
    assert [tuple(row[1:7]) for row in loaded] == [
        # the kinds of unattributed_costs (test above): commitment; tax; support; the credit, untagged
        # resources and charges without one
        (d("158257.5125782371"), d(0), d("56121.36"), d("12958.68"), d("10188.83"), d("-2884.6688263298")),
        (d("39166.4409322356"), d("5431.76"), d("21705.60"), d("3296.54"), d("2871.30"), d("-210.4544756174")),
    ]
    runs = query(
        warehouse,
        "select training_run, round(direct_cost, 2), round(fully_loaded_cost, 2) from run_costs_fully_loaded "
        "where billing_period = '2026-10-01' order by training_run",
    )
    assert runs == [
        ("llm-13b-ft-r2", d("10031.65"), d("15884.80")),
        ("llm-3b-pt-gcp", d("31126.98"), d("33334.50")),
        ("llm-7b-pt-r1", d("117098.89"), d("185422.42")),
    ]
    # an analysis: run_costs still holds the direct cost alone
    assert query(warehouse, "select sum(effective_cost) from run_costs where billing_period = '2026-10-01'") == [
        (d("158257.5125782371"),)
    ]
    reports = root / ".runledger" / "reports"
    assert (
        "| 2026-10 | USD | 10,031.65 | 0.00 | 4,428.44 | 867.82 | 803.98 | -247.09 | 15,884.80 |\n"
        "| 2026-11 | USD | 15,687.50 | 0.00 | 13,022.74 | 1,485.09 | 1,722.70 | -198.92 | 31,719.10 |\n"
        "| **Total** | **USD** | **25,719.15** | **0.00** | **17,451.18** | **2,352.90** | **2,526.68** | "
        "**-446.01** | **47,603.90** |"
    ) in (reports / "llm-13b-ft-r2" / "report.md").read_text()
    assert (
        "| USD | 98,046.40 | 117,138.71 | 185,502.93 | +19,092.30 | +19.5 % |" in (reports / "summary.md").read_text()
    )


def test_the_7b_runs_progress_and_unit_economics(demo: tuple[Path, Path]) -> None:
    """7B ran 03 Oct 00:00 → 10 Oct 12:00 on 128 GPUs at 830 steps an hour; two crashes each cost
    45 minutes until the resume and lost the work since the last checkpoint, so it ended at step
    141,308 of the 154,973 its 6.5e11 tokens need at 1,024 x 4,096 tokens per step."""
    root, warehouse = demo
    cursor_sql = "select * from run_progress where training_run = 'llm-7b-pt-r1'"
    with reading(warehouse) as conn:
        cursor = conn.execute(cursor_sql)
        row = dict(zip([column[0] for column in cursor.description], cursor.fetchone(), strict=True))
    assert row["last_step"] == 141_308
    assert row["tokens_trained"] == 141_308 * 4_194_304 == 592_688_709_632
    # 180 hours of wall-clock, 2 x 45 minutes down: 192 GPU-hours of restart downtime
    assert (row["wall_clock_hours"], row["downtime_hours"], row["productive_hours"]) == (
        Decimal(180),
        Decimal("1.5"),
        Decimal("178.5"),
    )
    assert row["downtime_hours"] * 128 == 192
    # steps advanced while training: 0 → 47,725 (crash), 44,820 → 109,975, 106,032 → 141,308 in 178.5 h
    steps = 47_725 + (109_975 - 44_820) + (141_308 - 106_032)
    assert steps == 148_156
    assert row["step_time_seconds"] == (Decimal(642_600) / steps).quantize(TEN_DECIMALS, ROUND_HALF_UP)
    assert row["tokens_per_gpu_second"] == (Decimal(4_194_304 * steps) / (642_600 * 128)).quantize(
        TEN_DECIMALS, ROUND_HALF_UP
    )
    # 16 p5 nodes x 8 GPUs x 186 hours (the nodes ran six hours past the end)
    assert row["gpu_hours"] == 23_808
    # effective MFU of the tokens trained: 6 x 7e9 x tokens / (989e12 x 3600) / 23,808
    true_mfu = Decimal(6) * Decimal("7e9") * 592_688_709_632 / (Decimal("989e12") * 3600) / 23_808
    assert abs(row["effective_mfu"] - true_mfu) < Decimal("1e-9")
    assert round(row["effective_mfu"], 3) == Decimal("0.294")
    ((reported,),) = query(
        warehouse,
        "select actual_effective_mfu from budget_variance "
        "where training_run = 'llm-7b-pt-r1' and cost_category = 'compute'",
    )
    assert round(reported, 3) == Decimal("0.322")
    # 117,138.71 of attributed spend over 592.69e9 tokens, against 98,046.40 over 650e9 planned
    assert round(row["effective_cost"], 2) == Decimal("117138.71")
    assert row["cost_per_1e9_tokens"] == (row["effective_cost"] / Decimal("592.688709632")).quantize(
        TEN_DECIMALS, ROUND_HALF_UP
    )
    assert round(row["cost_per_1e9_tokens"], 2) == Decimal("197.64")
    assert round(row["estimated_cost_per_1e9_tokens"], 2) == Decimal("150.84")
    assert round(row["cost_per_1e9_tokens"] / row["estimated_cost_per_1e9_tokens"] - 1, 3) == Decimal("0.310")
    # 14 nodes under the Savings Plan at 36.50 an hour, 2 on demand at 55.04 (8 GPUs each)
    pricing = query(
        warehouse,
        "select pricing, gpu_hours, cost_per_gpu_hour, gpu_hours_share from run_pricing "
        "where training_run = 'llm-7b-pt-r1' order by pricing",
    )
    assert pricing == [
        ("on_demand", Decimal(2 * 8 * 186), Decimal("6.88"), Decimal("0.125")),
        ("savings_plan", Decimal(14 * 8 * 186), Decimal("4.5625"), Decimal("0.875")),
    ]
    markdown = (root / ".runledger" / "reports" / "llm-7b-pt-r1" / "report.md").read_text()
    assert "## Progress and unit economics" in markdown
    assert "- **Steps:** 141,308 of 154,973 planned (91.2 %)" in markdown
    assert "- **Cost per 1e9 tokens (USD):** 197.64" in markdown
    assert "- **Estimated cost per 1e9 tokens (USD):** 150.84" in markdown
    assert "| On-demand | 2,976.0 | 12.5 % |" in markdown
    assert (
        "<h2>Progress and unit economics</h2>"
        in (root / ".runledger" / "reports" / "llm-7b-pt-r1" / "report.html").read_text()
    )


def causes_of(warehouse: Path, run: str) -> dict[tuple[str, str, str | None], tuple[Decimal, Decimal | None, str]]:
    """A run's variance causes by (parent, cause, pricing): amount, GPU-hours, evidence."""
    with reading(warehouse) as conn:
        rows = conn.execute(
            "select parent, cause, pricing, amount, gpu_hours, evidence from variance_causes where training_run = $run",
            {"run": run},
        ).fetchall()
    return {(parent, cause, pricing): tuple(values) for parent, cause, pricing, *values in rows}


def test_the_7b_runs_variance_causes_against_a_hand_computation(demo: tuple[Path, Path]) -> None:
    """The 7B story's own inputs: 16 p5 nodes of 8 GPUs for 186 hours (10-03 00:00 to 10-10
    18:00), 14 under the Savings Plan at 36.50 a node-hour and 2 on demand at 55.04; the budget
    prices every GPU-hour at the Savings Plan's 36.50 / 8 = 4.5625 and plans 6 x 7e9 x 6.5e11
    FLOPs at 40 % of 989 TFLOP/s plus 10 % overhead. Two crashes lose the work since the last
    six-hourly checkpoint (09:30 - 06:00 and 16:45 - 12:00) and wait 45 minutes each for the
    resume; training ends at 12:00, six hours before the nodes stop, at step 141,308 of 1,024 x
    4,096 tokens."""
    _, warehouse = demo
    rate = Decimal("36.50") / 8
    planned_gpu_hours = (
        Decimal(6) * Decimal("7e9") * Decimal("6.5e11") / (Decimal("989e12") * 3600) / Decimal("0.4") * Decimal("1.1")
    )
    actual_gpu_hours = Decimal(16 * 8 * 186)
    recompute = (Decimal("3.5") + Decimal("4.75")) * 128
    downtime = 2 * Decimal("0.75") * 128
    idle = Decimal(6 * 128)
    tokens_trained = 141_308 * 4_194_304
    assert (actual_gpu_hours, recompute, downtime, idle) == (23_808, 1_056, 192, 768)
    causes = causes_of(warehouse, "llm-7b-pt-r1")
    ((estimated_gpu_hours, usage_variance, rate_variance),) = query(
        warehouse,
        "select estimated_gpu_hours, usage_variance, rate_variance from budget_variance "
        "where training_run = 'llm-7b-pt-r1' and cost_category = 'compute'",
    )
    assert abs(estimated_gpu_hours - planned_gpu_hours) < Decimal("1e-9")
    assert causes["usage", "recompute_after_failure", None][:2] == (Decimal("4818.00"), recompute)
    assert causes["usage", "restart_downtime", None][:2] == (Decimal("876.00"), downtime)
    assert causes["usage", "idle_after_run", None][:2] == (Decimal("3504.00"), idle)
    # scope: the planned GPU-hours of the tokens trained (their share of 6.5e11 at 10 decimals)
    # less the planned GPU-hours, at the estimated rate
    share = (Decimal(tokens_trained) / Decimal("6.5e11")).quantize(TEN_DECIMALS, ROUND_HALF_UP)
    scope_gpu_hours = (estimated_gpu_hours * share).quantize(TEN_DECIMALS, ROUND_HALF_UP) - estimated_gpu_hours
    scope, scope_hours, scope_evidence = causes["usage", "scope", None]
    assert (scope, scope_hours) == ((scope_gpu_hours * rate).quantize(TEN_DECIMALS, ROUND_HALF_UP), scope_gpu_hours)
    assert round(scope, 2) == Decimal("-8482.55")
    assert scope_evidence == "592,688,709,632 of 650,000,000,000 planned tokens trained, 91.2 %"
    # throughput: the rest of the 2,721.9 GPU-hours over plan; 7,555 tokens/s/GPU over the
    # GPU-hours not idle, recomputed or down, against 6.5e11 over the planned GPU-hours
    throughput, throughput_hours, throughput_evidence = causes["usage", "throughput", None]
    assert throughput_hours == actual_gpu_hours - estimated_gpu_hours - recompute - downtime - idle - scope_gpu_hours
    assert throughput == usage_variance - Decimal("4818.00") - Decimal("876.00") - Decimal("3504.00") - scope
    assert round(throughput, 2) == Decimal("11703.15")
    observed = Decimal(tokens_trained) / ((actual_gpu_hours - recompute - downtime - idle) * 3600)
    planned = Decimal("6.5e11") / (planned_gpu_hours * 3600)
    assert throughput_evidence == (
        f"{observed:,.0f} tokens per second per GPU while training, against {planned:,.0f} planned"
    )
    assert (round(observed), round(planned)) == (7_555, 8_563)
    # rate: 2 nodes on demand at 55.04 / 8 = 6.88 instead of 4.5625; the Savings Plan's price is the plan's
    mix, mix_hours, mix_evidence = causes["rate", "pricing_mix", "on_demand"]
    assert (mix, mix_hours) == ((Decimal("6.88") - rate) * 2 * 8 * 186, Decimal(2976))
    assert mix == Decimal("6896.88") == rate_variance
    assert mix_evidence.startswith(
        "2 resources on demand: 2,976 GPU-hours, 12.5 % of the run's, at 6.8800 per GPU-hour"
    )
    assert causes["rate", "price", "savings_plan"][:2] == (Decimal(0), Decimal(14 * 8 * 186))
    assert {key for key in causes if key[0] == "total"} == {
        ("total", name, None) for name in ("rate", "usage", "storage", "network", "data", "monitoring")
    }
    # per 1e9 tokens: 117,138.71 over the tokens trained
    ((cost_per_1e9_tokens,),) = query(
        warehouse, "select cost_per_1e9_tokens from run_progress where training_run = 'llm-7b-pt-r1'"
    )
    assert round(cost_per_1e9_tokens, 2) == Decimal("197.64")


def test_every_level_of_the_variance_causes_sums_exactly_to_its_parent(demo: tuple[Path, Path]) -> None:
    _, warehouse = demo
    parents = {
        (run, category): (variance, rate_variance, usage_variance)
        for run, category, variance, rate_variance, usage_variance in query(
            warehouse,
            "select training_run, cost_category, variance, rate_variance, usage_variance from budget_variance",
        )
    }
    runs = {run for run, _ in parents}
    assert runs == {"llm-7b-pt-r1", "llm-13b-ft-r2", "llm-3b-pt-gcp"}
    for run in runs:
        causes = causes_of(warehouse, run)
        by_parent: dict[str, Decimal] = defaultdict(Decimal)
        for (parent, _, _), (amount, _, _) in causes.items():
            by_parent[parent] += amount
        variance, _, _ = parents[run, "total"]
        _, rate_variance, usage_variance = parents[run, "compute"]
        expected = {"total": variance, "rate": rate_variance, "usage": usage_variance}
        if "throughput" in by_parent:  # a run with step timings: throughput = input_bound + compute_throughput
            expected["throughput"] = causes["usage", "throughput", None][0]
        assert dict(by_parent) == expected, run
        assert causes["total", "rate", None][0] == rate_variance and causes["total", "usage", None][0] == usage_variance


def test_the_reports_and_the_summary_open_with_the_why_paragraph(demo: tuple[Path, Path]) -> None:
    root, _ = demo
    reports = root / ".runledger" / "reports"
    why = (
        "19,092.30 (19.5 %) over the estimate. The largest causes: slower throughput +11,703.15 (7,555 tokens "
        "per second per GPU while training, against 8,563 planned); fewer tokens than planned -8,482.55 "
        "(592,688,709,632 of 650,000,000,000 planned tokens trained, 91.2 %); on-demand GPU-hours +6,896.88 "
        "(2 resources on demand: 2,976 GPU-hours, 12.5 % of the run's, at 6.8800 per GPU-hour instead of the "
        "estimated 4.5625). Of the slower throughput, 1,401.60 (12.0 % of it) is time the GPUs spent waiting for "
        "data: 307.2 GPU-hours waiting for data over 24 hours with step timings, at the estimated 4.5625 per "
        "GPU-hour."
    )
    markdown = (reports / "llm-7b-pt-r1" / "report.md").read_text()
    assert markdown.split("## Overview\n\n", 1)[1].startswith(f"> {why}\n")
    html = (reports / "llm-7b-pt-r1" / "report.html").read_text()
    assert html.split("<h2>Overview</h2>", 1)[1].lstrip().startswith(f'<p class="note tone-over">{escape(why)}</p>')
    assert f"llm-7b-pt-r1: {why}" in (reports / "summary.md").read_text()
    # the waterfall: estimate, then the leaves (rate's and usage's, zero ones left out), then actual
    waterfall = markdown.split("## Variance: estimate to actual", 1)[1].split("| **Actual**", 1)[0]
    steps = re.findall(r"^\| ([^|]+?) \| ([^|]+?) \|", waterfall, re.MULTILINE)[2:]
    assert steps == [
        ("Estimate", "—"),
        ("on-demand GPU-hours", "+6,896.88"),
        ("idle after the end (at the estimated rate)", "+3,504.00"),
        ("recompute after failures (at the estimated rate)", "+4,818.00"),
        ("restart downtime (at the estimated rate)", "+876.00"),
        ("fewer tokens than planned", "-8,482.55"),
        ("slower throughput", "+11,703.15"),
        ("storage", "+136.55"),
        ("network", "+21.75"),
        ("data", "-166.40"),
        ("monitoring", "-215.08"),
    ]


def test_the_thresholds_besides_cost_fire_where_the_demo_runs_cross_them(demo: tuple[Path, Path]) -> None:
    _, warehouse = demo
    crossings = query(
        warehouse,
        "select kind, coalesce(training_run, resource_id, scope), threshold, crossed_on, round(observed, 2) "
        "from budget_alerts where kind <> 'cost' order by all",
    )

    assert crossings == [
        # the 7B run's telemetry day: a morning waiting for data, an afternoon of idle nodes
        ("data_loading_share", "llm-7b-pt-r1", "warning", date(2026, 10, 6), Decimal("0.25")),
        # llm-7b-pt-r1 trained 23,808 GPU-hours of 21,086 planned (the budgets warn at 1.0, are over
        # at 1.1); llm-3b-pt-gcp's 5,760 of 5,850 raise nothing
        ("gpu_hours", "llm-7b-pt-r1", "over", date(2026, 10, 10), Decimal("23808.00")),
        ("gpu_hours", "llm-7b-pt-r1", "warning", date(2026, 10, 9), Decimal("21504.00")),
        # Dana's sweep: budgeted at 6,000 for its twelve trials, it spent 6,140.40 by the end of its
        # second day, the unbudgeted two-node follow-up run included (7,021.04 in all)
        ("group_budget", "lr-sweep-1b", "over", date(2026, 11, 18), Decimal("6140.40")),
        ("group_budget", "lr-sweep-1b", "warning", date(2026, 11, 18), Decimal("6140.40")),
        # the p5-cluster's node p5-004, held by no job for 7 hours on its first day (an hour some job
        # held is the cluster's utilization, not idle)
        ("idle_gpus", "i-0c5e7f9a1b3d20004", "warning", date(2026, 11, 17), Decimal("7.00")),
        # the untagged GPU dev instance, 12 hours a workday with no run, from its first day
        ("idle_gpus", "i-0e7d5c4b3a2910042", "warning", date(2026, 10, 12), Decimal("7.00")),
        # half the 7B run's nodes idle from 13:00 on its telemetry day: a mean of 47.5 % for 3 hours
        ("low_gpu_utilization", "llm-7b-pt-r1", "warning", date(2026, 10, 6), Decimal("0.48")),
        # the storage estimates count the nodes' EBS volumes (before: every run crossed both levels on
        # its first day); the 3B run keeps its 45 checkpoints after its end (10 retained), the 7B run
        # its volumes 186 of 164.7 planned hours and its 30 checkpoints (5 retained) after its window;
        # the 13B run's 235.59 stays under its 295.72
        ("storage", "llm-3b-pt-gcp", "over", date(2026, 11, 12), Decimal("22.19")),
        ("storage", "llm-3b-pt-gcp", "warning", date(2026, 11, 11), Decimal("20.57")),
        ("storage", "llm-7b-pt-r1", "over", date(2026, 10, 15), Decimal("661.67")),
        ("storage", "llm-7b-pt-r1", "warning", date(2026, 10, 10), Decimal("650.40")),
        # llm-7b-pt-r1 ran past its 164.7 planned hours (its failures), to 180, below the 181.2 over level
        ("wall_clock", "llm-7b-pt-r1", "warning", date(2026, 10, 9), Decimal("168.00")),
    ]
    # no day of training is 3x its trailing median: the jump from data preparation to training is
    # no anomaly, and the month-long fee lines are no day's usage
    assert not [row for row in crossings if row[0] == "daily_spend_anomaly"]
    # every event of the demo's runs is billed: nothing provisional
    assert query(warehouse, "select count(*) from provisional_spend") == [(0,)]


def test_group_budgets_of_the_sweep_and_the_platform_team_against_their_allocations(demo: tuple[Path, Path]) -> None:
    """The demo's group budgets: Dana's sweep (experiment lr-sweep-1b, 6,000 of compute over its
    three days on the cluster) and ml-platform's 3,000 a month, each actual summed here from the
    allocations carrying the scope's value."""
    root, warehouse = demo
    (sweep,) = query(
        warehouse,
        "select sum(effective_cost) from cost_allocations where experiment = 'lr-sweep-1b' "
        "and ChargePeriodStart >= '2026-11-17' and ChargePeriodStart < '2026-11-20'",
    )
    platform = dict(
        query(
            warehouse,
            "select strftime(BillingPeriodStart, '%Y-%m'), sum(effective_cost) from cost_allocations "
            "where owner = 'ml-platform' group by 1",
        )
    )
    (as_of,) = query(warehouse, "select as_of from group_budget_variance where period = '2026-11'")[0]
    assert (sweep[0], platform, as_of) == (
        Decimal("7021.04"),
        {"2026-10": Decimal("2282.305738"), "2026-11": Decimal("1002.951062")},
        datetime(2026, 11, 29),  # the newest GCP usage hour, the team's spend being GCP's
    )
    elapsed = Decimal(28) / Decimal(30)
    november_forecast = (platform["2026-11"] / elapsed.quantize(Decimal("1e-10"), ROUND_HALF_UP)).quantize(
        Decimal("1e-10"), ROUND_HALF_UP
    )
    rows = query(
        warehouse,
        "select scope_kind, scope, period, cost_category, estimated_cost, actual_cost, variance, variance_pct, status, "
        "forecast_at_completion from group_budget_variance order by all",
    )
    assert rows == [
        # the sweep is over: the twelve trials' 732.5 GPU-hours fit its plan, the follow-up run on two
        # whole nodes (288 GPU-hours) did not
        ("experiment", "lr-sweep-1b", "2026-11-17", "compute", 6000, sweep[0], sweep[0] - 6000,
         Decimal("0.1701733333"), "over", sweep[0]),
        ("experiment", "lr-sweep-1b", "2026-11-17", "total", 6000, sweep[0], sweep[0] - 6000,
         Decimal("0.1701733333"), "over", sweep[0]),
        ("owner", "ml-platform", "2026-10", "total", 3000, platform["2026-10"], platform["2026-10"] - 3000,
         Decimal("-0.2392314207"), "under", platform["2026-10"]),
        # 28 of November's 30 days behind the data's as_of: forecast pro rata
        ("owner", "ml-platform", "2026-11", "total", 3000, platform["2026-11"], platform["2026-11"] - 3000,
         Decimal("-0.6656829793"), "under", november_forecast),
    ]  # fmt: skip
    summary = (root / ".runledger" / "reports" / "summary.md").read_text()
    section = summary.split("## Group budgets\n", 1)[1].split("\n## ", 1)[0]
    assert (
        "| experiment | lr-sweep-1b | 2026-11-17 | USD | 6,000.00 | 7,021.04 | 1,021.04 | 17.0 % | **Over** "
        "| 7,021.04 |"
    ) in section
    assert "| owner | ml-platform | 2026-11 | USD | 3,000.00 | 1,002.95 | -1,997.05 | -66.6 % | **Under** |" in section


def test_the_summary_lists_every_budget_alert_and_a_run_report_its_own(demo: tuple[Path, Path]) -> None:
    """Before, the summary listed the 3 cost crossings of the 19 `runledger run` counted, and no
    report named the idle GPU instances (now 15: the budgets warn at their estimate, and the
    sweep's group budget crossed both levels)."""
    root, warehouse = demo
    reports = root / ".runledger" / "reports"
    ((count,),) = query(warehouse, "select count(*) from budget_alerts")
    summary = (reports / "summary.md").read_text()
    section = summary.split("## Budget alerts\n", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| ")][2:]  # after the header
    assert count == len(rows) == 15
    assert (
        "| idle GPU instance | i-0e7d5c4b3a2910042 | warning | 2026-10-12 | 7.0 hours | 6.0 hours | 39.70 USD | — |"
        in rows
    )
    assert (
        "| GPU-hours | [llm-7b-pt-r1](llm-7b-pt-r1/report.md) | over | 2026-10-10 | 23,808.0 GPU-hours "
        "| 23,194.7 GPU-hours (110.0 % of the planned GPU-hours) | 117,051.55 USD | **Over** |"
    ) in rows
    assert {row.split(" | ")[0] for row in rows} == {
        "| cost",
        "| GPU-hours",
        "| wall-clock hours",
        "| storage spend",
        "| idle GPU instance",
        "| low GPU utilization",
        "| steps waiting for data",
        "| group budget",
    }
    assert (
        "| group budget | experiment lr-sweep-1b (2026-11-17) | over | 2026-11-18 | 6,140.40 USD "
        "| 6,000.00 USD (100.0 % of the period's budget) | 6,140.40 USD | — |"
    ) in rows
    assert (
        "| low GPU utilization | [llm-7b-pt-r1](llm-7b-pt-r1/report.md) | warning | 2026-10-06 | 47.5 % | 50.0 % |"
    ) in "\n".join(rows)
    # a run's report: its own alerts of every kind, and the idle instance it shared on the cluster
    seven_b = (reports / "llm-7b-pt-r1" / "report.md").read_text().split("## Budget alerts\n", 1)[1]
    assert "| wall-clock hours | llm-7b-pt-r1 | warning | 2026-10-09 | 168.0 hours |" in seven_b.split("\n## ", 1)[0]
    evaluation = (reports / "eval-7b-ckpts" / "report.md").read_text().split("## Budget alerts\n", 1)[1]
    assert "| idle GPU instance | i-0c5e7f9a1b3d20004 | warning | 2026-11-17 | 7.0 hours | 6.0 hours |" in evaluation


def test_a_registered_bucket_after_its_window_is_on_no_tagging_worklist(demo: tuple[Path, Path]) -> None:
    """Before, ckpt-7b (named by the registry for llm-7b-pt-r1) was a taggable row of the worklist
    after the run's window, and the 7B and 13B reports advised tagging it; then it was unattributed
    spend outside the registry window (87.15). Storage the run left behind is now the run's."""
    root, warehouse = demo
    reports = root / ".runledger" / "reports"
    assert query(warehouse, "select count(*) from unattributed_costs where resource = 'ckpt-7b'") == [(0,)]
    for run in ("llm-7b-pt-r1", "llm-13b-ft-r2"):
        report = (reports / run / "report.md").read_text()
        assert "| ckpt-7b |" not in report.split("## Top unattributed resources", 1)[1]
        assert "registered window" not in report


def test_the_reports_link_back_style_every_status_and_explain_each_rate(demo: tuple[Path, Path]) -> None:
    root, _ = demo
    reports = root / ".runledger" / "reports"
    three_b = (reports / "llm-3b-pt-gcp" / "report.html").read_text()
    assert three_b.count('<p class="up"><a href="../summary.html">← Summary of every run</a></p>') == 1
    assert (reports / "llm-3b-pt-gcp" / "report.md").read_text().startswith("[← Summary of every run](../summary.md)\n")
    # the ended run within ±10 % of its estimate: a styled pill like every other status
    assert '<span class="badge tone-within">Within</span>' in three_b and ".tone-within" in three_b
    # two costs per GPU-hour, each explained
    markdown = (reports / "llm-3b-pt-gcp" / "report.md").read_text()
    assert "| Committed use discount | 5,760.0 | 100.0 % | 35,549.54 | 6.1718 |" in markdown
    assert "| Rate, USD per GPU-hour (rate variance) | 7.6400 | 7.6408 | +0.0008 | +4.58 |" in markdown
    assert (
        "Per GPU-hour: the effective cost of the lines that carry GPU-hours ÷ their GPU-hours. The compute rate "
        "(7.6408 per GPU-hour) divides all compute spend, 44,010.98, by the same GPU-hours: it includes 8,461.44 of "
        "compute lines without GPU-hours"
    ) in markdown
    assert "the estimated rate (7.6400), the budget's price per GPU-hour, covers them too." in markdown
    # the top resources' money axis: few enough ticks that its labels never run into each other
    ticks = re.findall(r">([0-9,]+)</text>", (reports / "llm-7b-pt-r1" / "charts" / "top_resources.svg").read_text())
    assert ticks == ["0", "2,000", "4,000", "6,000", "8,000", "10,000"]
