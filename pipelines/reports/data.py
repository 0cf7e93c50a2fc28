"""What the reports show, read from the warehouse.

Every statement is a `sql/report_*.sql` file with its values bound as parameters; nothing here
writes, so a read-only connection is enough. Money stays `Decimal` as the warehouse returns it:
sums are exact and rounding happens only when a number is formatted for display.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime
from decimal import Decimal
from typing import Any

import duckdb

from pipelines.reports.clusters import RunCluster, load_run_clusters
from pipelines.reports.recommendations import RunRecommendations, load_run_recommendations
from pipelines.reports.utilization import UtilizationHour
from pipelines.warehouse.sql import dict_rows, read_sql

TOTAL = "total"
TOP_UNATTRIBUTED_ROWS = 10
TOP_RESOURCE_ROWS = 10
TOP_WASTE_ROWS = 10
DIFF_SUFFIX = "_diff"


@dataclass(frozen=True)
class RunHeader:
    """Who and what a run is, its budget window and thresholds, and how current the numbers are."""

    training_run: str
    experiment: str | None
    dataset_version: str | None
    owner: str | None
    currency: str | None
    has_budget: bool
    window_start: date | None
    window_end: date | None
    warning_threshold: Decimal | None
    over_threshold: Decimal | None
    total_status: str | None
    as_of: datetime | None
    billing_periods: tuple[date, ...]
    first_charge: datetime | None
    last_charge: datetime | None
    planned_start: datetime | None = None
    planned_wall_clock_hours: Decimal | None = None
    sources_as_of: dict[str, datetime] | None = None
    custom_dimensions: Mapping[str, str] = field(default_factory=dict)
    fully_loaded_cost: Decimal | None = None


@dataclass(frozen=True)
class CostLine:
    """One row of a run's numbers table: a cost category, or the run's total."""

    cost_category: str
    estimated_cost: Decimal | None
    actual_cost: Decimal
    variance: Decimal | None
    variance_ratio: float | None
    status: str | None
    forecast_at_completion: Decimal | None
    estimated_gpu_hours: Decimal | None
    actual_gpu_hours: Decimal | None
    estimated_rate: Decimal | None
    actual_rate: Decimal | None
    rate_variance: Decimal | None
    usage_variance: Decimal | None
    estimated_effective_mfu: Decimal | None = None
    actual_effective_mfu: Decimal | None = None
    actual_tokens_per_gpu_second: Decimal | None = None


@dataclass(frozen=True)
class RunResource:
    """One of a run's largest resources by effective cost (resource None: lines without an id)."""

    provider: str | None
    resource: str | None
    service: str | None
    cost_category: str | None
    effective_cost: Decimal
    gpu_hours: Decimal | None
    share_of_run: Decimal | None


@dataclass(frozen=True)
class TopResources:
    """A run's largest resources and how many resources it used in all."""

    top: tuple[RunResource, ...]
    resource_rows: int


@dataclass(frozen=True)
class BudgetAlert:
    """A `budget_alerts` row: the first day a run (or an idle GPU instance, a group budget's scope,
    or a series of spend beyond runs: `series`) reached a level of one kind (`cost`, `gpu_hours`,
    `wall_clock`, `storage`, `daily_spend_anomaly`, `idle_gpus`, `group_budget`, ...)."""

    kind: str
    training_run: str | None
    resource_id: str | None
    threshold: str
    threshold_fraction: Decimal
    threshold_amount: Decimal
    unit: str | None
    observed: Decimal
    crossed_on: date
    cumulative_cost: Decimal
    currency: str | None
    series: str | None = None
    scope_kind: str | None = None
    scope: str | None = None
    period: str | None = None


@dataclass(frozen=True)
class DailySpend:
    """A run's effective spend on one charge day (UTC) in one cost category."""

    charge_day: date
    cost_category: str
    effective_cost: Decimal


@dataclass(frozen=True)
class UnattributedResource:
    """One `unattributed_costs` row: spend with no run in an account the run used."""

    provider: str | None
    account: str | None
    service: str | None
    resource: str | None
    billing_period: date
    currency: str | None
    cost_category: str | None
    effective_cost: Decimal
    share_of_period: Decimal | None


@dataclass(frozen=True)
class UnattributedInAccounts:
    """The largest unattributed resources of a run's accounts, and the size of the whole list."""

    top: tuple[UnattributedResource, ...]
    resource_rows: int
    effective_cost: Decimal


@dataclass(frozen=True)
class OutsideWindow:
    """A resource a run's registry entry names, charged outside the run's window: unattributed
    (rule `outside registry window`), on no tagging worklist."""

    resource: str
    currency: str | None
    first_charge: datetime
    last_charge: datetime
    effective_cost: Decimal


@dataclass(frozen=True)
class ReconciliationRow:
    """One source, billing period and currency of the `reconciliation` view and its differences."""

    source_name: str
    billing_period: date
    currency: str | None
    diffs: dict[str, Decimal | int | None]


@dataclass(frozen=True)
class PeriodShare:
    """A billing period's total effective spend, its unattributed part and the untagged part of
    that (the spend tagging could move)."""

    billing_period: date
    currency: str | None
    effective_cost: Decimal
    unattributed_cost: Decimal
    unattributed_share: float | None
    untagged_cost: Decimal
    untagged_share: float | None


@dataclass(frozen=True)
class WasteKind:
    """A run's waste of one kind and its share of the run's attributed effective cost."""

    kind: str
    items: int
    effective_cost: Decimal
    gpu_hours: Decimal
    share_of_run: Decimal | None
    method: str | None


@dataclass(frozen=True)
class WasteItem:
    """One row of the `waste` table: an idle resource, a failure, a checkpoint bucket …"""

    kind: str
    cost_category: str
    effective_cost: Decimal
    gpu_hours: Decimal
    detail: str | None
    method: str


@dataclass(frozen=True)
class RunWaste:
    """A run's waste: every kind (0 where none) and its largest items."""

    kinds: tuple[WasteKind, ...]
    top: tuple[WasteItem, ...]

    @property
    def effective_cost(self) -> Decimal:
        return sum((kind.effective_cost for kind in self.kinds), Decimal(0))


@dataclass(frozen=True)
class WasteRank:
    """A run or an owner (`level`) with its attributed cost and the waste in it."""

    level: str
    name: str
    owner: str | None
    currency: str | None
    runs: int
    attributed_cost: Decimal
    waste_cost: Decimal
    waste_share: Decimal | None


@dataclass(frozen=True)
class GroupBudgetPeriod:
    """A `group_budget_variance` total row: one period of a group budget's scope."""

    scope_kind: str
    scope: str
    period: str
    currency: str
    estimated_cost: Decimal
    actual_cost: Decimal
    variance: Decimal
    variance_pct: Decimal | None
    status: str
    forecast_at_completion: Decimal | None


@dataclass(frozen=True)
class RunProgress:
    """A run's `run_progress` row with its budget's planned tokens and steps, and the effective
    MFU `budget_variance` reports (the planned tokens taken as trained)."""

    tokens_trained: int | None
    planned_tokens: int | None
    planned_steps: int | None
    last_step: int
    wall_clock_hours: Decimal
    productive_hours: Decimal
    downtime_hours: Decimal
    step_time_seconds: Decimal | None
    tokens_per_gpu_second: Decimal | None
    effective_mfu: Decimal | None
    planned_tokens_effective_mfu: Decimal | None
    cost_per_1e9_tokens: Decimal | None
    estimated_cost_per_1e9_tokens: Decimal | None


@dataclass(frozen=True)
class RunPricing:
    """A run's GPU-hours of one pricing type (`run_pricing`)."""

    pricing: str
    gpu_hours: Decimal
    effective_cost: Decimal
    cost_per_gpu_hour: Decimal | None
    gpu_hours_share: Decimal | None


@dataclass(frozen=True)
class VarianceCause:
    """A row of `variance_causes`: part of its parent's variance (`total`, `rate` or `usage`)."""

    parent: str
    cause: str
    pricing: str | None
    amount: Decimal
    gpu_hours: Decimal | None
    evidence: str | None


@dataclass(frozen=True)
class ProvisionalSpend:
    """A run's spend since its newest billed hour, estimated from its events (`provisional_spend`),
    or such an estimate the bill has since covered (status `billed`)."""

    status: str
    billed_through: datetime
    estimated_through: datetime
    gpu_hours: Decimal
    rate: Decimal
    estimated_cost: Decimal
    billed_cost: Decimal | None
    error: Decimal | None
    error_pct: Decimal | None
    currency: str | None


@dataclass(frozen=True)
class CommitmentCharge:
    """Unused commitment a commitment rule (`attribution.commitments`) charged to a run in one
    billing period."""

    billing_period: date
    commitment_type: str | None
    commitment_id: str
    allocation_rule: str
    currency: str | None
    charged_cost: Decimal


@dataclass(frozen=True)
class RunOverview:
    """What the summary needs of a run: its header, numbers table and variance causes (in the
    waterfall's order; none without a budget)."""

    header: RunHeader
    categories: tuple[CostLine, ...]
    total: CostLine
    causes: tuple[VarianceCause, ...] = ()


@dataclass(frozen=True)
class FullyLoaded:
    """A run's direct cost in one billing period and currency, and its shares of the spend no run
    owns (`run_costs_fully_loaded`)."""

    billing_period: date
    currency: str | None
    direct_cost: Decimal
    idle_capacity_share: Decimal
    unused_commitment_share: Decimal
    tax_share: Decimal
    support_share: Decimal
    other_unattributed_share: Decimal
    fully_loaded_cost: Decimal


@dataclass(frozen=True)
class RunDetails:
    """What only the run's own report needs beyond its overview."""

    daily_spend: tuple[DailySpend, ...]
    unattributed: UnattributedInAccounts
    reconciliation: tuple[ReconciliationRow, ...]
    top_resources: TopResources
    alerts: tuple[BudgetAlert, ...]
    waste: RunWaste
    progress: RunProgress | None = None
    pricing: tuple[RunPricing, ...] = ()
    provisional: tuple[ProvisionalSpend, ...] = ()
    commitment_charges: tuple[CommitmentCharge, ...] = ()
    clusters: tuple[RunCluster, ...] = ()
    utilization: tuple[UtilizationHour, ...] = ()
    outside_window: tuple[OutsideWindow, ...] = ()
    fully_loaded: tuple[FullyLoaded, ...] = ()
    recommendations: RunRecommendations = field(default_factory=RunRecommendations)


def fetch_rows(conn: duckdb.DuckDBPyConnection, sql: str, params: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    """Runs a statement (`read_sql(...)`) with bound parameters and returns its rows as dicts.

    Args:
        conn: warehouse connection, read-only is enough.
        sql: the statement's text.
        params: values for the statement's `$name` parameters.
    """
    return dict_rows(conn.execute(sql, params or {}))


def known_runs(conn: duckdb.DuckDBPyConnection) -> list[str]:
    """Returns every run with a budget or attributed cost, sorted."""
    return [row["training_run"] for row in fetch_rows(conn, read_sql("reports/known_runs"))]


def _rows_by_run(
    conn: duckdb.DuckDBPyConnection, sql: str, training_runs: Sequence[str], **params: Any
) -> dict[str, list[dict[str, Any]]]:
    """The rows of a `sql/reports/run_*` statement for all the runs at once (one pass over the
    warehouse, not one per run), grouped by run without their `training_run` column; every run
    asked for has an entry."""
    grouped: dict[str, list[dict[str, Any]]] = {training_run: [] for training_run in training_runs}
    for row in fetch_rows(conn, sql, {"training_runs": list(training_runs), **params}):
        grouped[row.pop("training_run")].append(row)
    return grouped


def load_overviews(conn: duckdb.DuckDBPyConnection, training_runs: Sequence[str]) -> dict[str, RunOverview]:
    """Reads the runs' headers, numbers tables (categories and total) and variance causes."""
    headers = _rows_by_run(conn, read_sql("reports/run_header"), training_runs)
    lines_by_run = _rows_by_run(conn, read_sql("reports/run_categories"), training_runs)
    causes_by_run = _rows_by_run(conn, read_sql("reports/run_causes"), training_runs)
    overviews = {}
    for training_run in training_runs:
        (header_row,) = headers[training_run]
        header_row["billing_periods"] = tuple(header_row["billing_periods"] or ())
        lines = [CostLine(**row) for row in lines_by_run[training_run]]
        (total,) = [line for line in lines if line.cost_category == TOTAL]
        categories = tuple(line for line in lines if line.cost_category != TOTAL)
        overviews[training_run] = RunOverview(
            header=RunHeader(training_run=training_run, **header_row),
            categories=categories,
            total=total,
            causes=tuple(VarianceCause(**row) for row in causes_by_run[training_run]),
        )
    return overviews


def load_details(
    conn: duckdb.DuckDBPyConnection,
    overviews: Sequence[RunOverview],
    reconciliation: Sequence[ReconciliationRow],
) -> dict[str, RunDetails]:
    """Reads the runs' daily spend, top resources, budget alerts, waste, progress, GPU-hours by
    pricing, provisional spend, unused commitment charged to them, the clusters they ran on, their
    GPU utilization and data wait by hour, unattributed neighbours, registered resources charged
    outside their windows, their fully loaded cost per period and recommendations; picks each run's
    reconciliation rows.

    Args:
        conn: warehouse connection.
        overviews: the runs' overviews, for their ids and billing periods.
        reconciliation: every row of the warehouse's reconciliation.
    """
    runs = [overview.header.training_run for overview in overviews]
    daily_spend = _rows_by_run(conn, read_sql("reports/run_daily_spend"), runs)
    unattributed = _rows_by_run(
        conn, read_sql("reports/run_unattributed", "rows"), runs, row_limit=TOP_UNATTRIBUTED_ROWS
    )
    outside_window = _rows_by_run(conn, read_sql("reports/run_unattributed", "outside_window"), runs)
    top_resources = _rows_by_run(conn, read_sql("reports/run_top_resources"), runs, row_limit=TOP_RESOURCE_ROWS)
    waste_kinds = _rows_by_run(conn, read_sql("reports/run_waste_kinds"), runs)
    waste_items = _rows_by_run(conn, read_sql("reports/run_waste_items"), runs, row_limit=TOP_WASTE_ROWS)
    progress = _rows_by_run(conn, read_sql("reports/run_progress"), runs)
    pricing = _rows_by_run(conn, read_sql("reports/run_pricing"), runs)
    provisional = _rows_by_run(conn, read_sql("reports/run_provisional"), runs)
    commitment_charges = _rows_by_run(conn, read_sql("reports/run_commitment_charges"), runs)
    clusters = load_run_clusters(conn, runs)
    utilization = _rows_by_run(conn, read_sql("reports/run_utilization"), runs)
    fully_loaded = _rows_by_run(conn, read_sql("reports/run_fully_loaded"), runs)
    recommendations = load_run_recommendations(conn, runs)
    alerts: dict[str, list[BudgetAlert]] = {training_run: [] for training_run in runs}
    for row in fetch_rows(conn, read_sql("reports/run_alerts", "by_run"), {"training_runs": runs}):
        alerts[row.pop("report_run")].append(BudgetAlert(**row))
    details = {}
    for overview in overviews:
        training_run = overview.header.training_run
        periods = set(overview.header.billing_periods)
        details[training_run] = RunDetails(
            daily_spend=tuple(DailySpend(**row) for row in daily_spend[training_run]),
            unattributed=_unattributed(unattributed[training_run]),
            reconciliation=tuple(row for row in reconciliation if row.billing_period in periods),
            top_resources=_top_resources(top_resources[training_run]),
            alerts=tuple(alerts[training_run]),
            waste=RunWaste(
                kinds=tuple(WasteKind(**row) for row in waste_kinds[training_run]),
                top=tuple(WasteItem(**row) for row in waste_items[training_run]),
            ),
            progress=next((RunProgress(**row) for row in progress[training_run]), None),
            pricing=tuple(RunPricing(**row) for row in pricing[training_run]),
            provisional=tuple(ProvisionalSpend(**row) for row in provisional[training_run]),
            commitment_charges=tuple(CommitmentCharge(**row) for row in commitment_charges[training_run]),
            clusters=tuple(clusters[training_run]),
            utilization=tuple(UtilizationHour(**row) for row in utilization[training_run]),
            outside_window=tuple(OutsideWindow(**row) for row in outside_window[training_run]),
            fully_loaded=tuple(FullyLoaded(**row) for row in fully_loaded[training_run]),
            recommendations=recommendations[training_run],
        )
    return details


def load_waste_ranking(conn: duckdb.DuckDBPyConnection) -> list[WasteRank]:
    """Reads every run, then every owner, ranked by the waste share of their attributed cost."""
    return [WasteRank(**row) for row in fetch_rows(conn, read_sql("reports/waste_ranking"))]


def load_group_budgets(conn: duckdb.DuckDBPyConnection) -> list[GroupBudgetPeriod]:
    """Reads every group budget's periods (their total rows), by scope and period."""
    return [GroupBudgetPeriod(**row) for row in fetch_rows(conn, read_sql("reports/group_budgets"))]


def _top_resources(rows: list[dict[str, Any]]) -> TopResources:
    return TopResources(
        top=tuple(RunResource(**{key: value for key, value in row.items() if key != "resource_rows"}) for row in rows),
        resource_rows=rows[0]["resource_rows"] if rows else 0,
    )


def _unattributed(rows: list[dict[str, Any]]) -> UnattributedInAccounts:
    if not rows:
        return UnattributedInAccounts(top=(), resource_rows=0, effective_cost=Decimal(0))
    top = tuple(
        UnattributedResource(**{key: value for key, value in row.items() if not key.startswith("candidate")})
        for row in rows
    )
    return UnattributedInAccounts(
        top=top, resource_rows=rows[0]["candidate_rows"], effective_cost=rows[0]["candidates_effective_cost"]
    )


def load_alerts(conn: duckdb.DuckDBPyConnection) -> list[BudgetAlert]:
    """Reads every budget alert of every kind, runs' and idle GPU instances', earliest first."""
    rows = fetch_rows(conn, read_sql("reports/run_alerts", "all"))
    return [BudgetAlert(**row) for row in rows]


def load_reconciliation(conn: duckdb.DuckDBPyConnection) -> list[ReconciliationRow]:
    """Reads every row of the `reconciliation` view with its `*_diff` columns."""
    rows = fetch_rows(conn, read_sql("marts/reconciliation", "rows"))
    return [
        ReconciliationRow(
            source_name=row["source_name"],
            billing_period=row["billing_period"],
            currency=row["currency"],
            diffs={key: value for key, value in row.items() if key.endswith(DIFF_SUFFIX)},
        )
        for row in rows
    ]


def load_period_shares(conn: duckdb.DuckDBPyConnection) -> list[PeriodShare]:
    """Reads each billing period's total and unattributed effective spend."""
    return [PeriodShare(**row) for row in fetch_rows(conn, read_sql("marts/unattributed_costs", "share"))]
