"""Shared clusters in the reports: each cluster's utilization by day, idle capacity and the runs'
shares in the summary, and the clusters a run ran on in its own report.

Read from the marts `cluster_utilization` and `run_cluster_share` only; a warehouse without them
(or without any cluster) shows no cluster.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import date
from decimal import Decimal
from itertools import groupby

import duckdb

from pipelines.reports.document import Block, Cell, Chart, Paragraph, Section, Table, money, percent, text_cell
from pipelines.reports.document import gpu_hours as hours
from pipelines.warehouse.sql import dict_rows, read_sql

UNSAFE_NAME_CHARACTERS = re.compile(r"[^A-Za-z0-9._-]+")
NO_RUN = "(jobs naming no run)"
SHARE_NOTE = (
    "GPU-hours: the GPUs a run's jobs held × the hours they held them, from the scheduler's "
    "accounting. Share: of the GPU-hours all jobs held on the cluster. Effective cost: the run's "
    "part of the nodes' bill lines, split by GPU-seconds"
)
IDLE_NOTE = (
    "Idle: the nodes' GPU-hours no job held, and their part of the nodes' cost; it stays the "
    "cluster's unless attribution.idle_capacity.share is proportional."
)


@dataclass(frozen=True)
class ClusterDay:
    """One UTC day of a cluster (`cluster_utilization`)."""

    day: date
    capacity_gpu_hours: Decimal
    allocated_gpu_hours: Decimal
    idle_gpu_hours: Decimal
    utilization: Decimal | None
    idle_cost: Decimal
    overhead_cost: Decimal


@dataclass(frozen=True)
class ClusterRunShare:
    """A run's GPU-hours on a cluster over all its days, and its share of them (`run_cluster_share`)."""

    training_run: str | None
    gpu_hours: Decimal
    share: Decimal | None
    effective_cost: Decimal
    idle_cost: Decimal


@dataclass(frozen=True)
class ClusterReport:
    """A cluster in one currency: its days, earliest first, and its runs, most GPU-hours first."""

    cluster: str
    currency: str | None
    days: tuple[ClusterDay, ...]
    runs: tuple[ClusterRunShare, ...]

    @property
    def chart_name(self) -> str:
        """The utilization chart's file stem (also its SVG ids' prefix)."""
        return UNSAFE_NAME_CHARACTERS.sub("_", f"cluster_utilization_{self.cluster}_{self.currency or ''}")


@dataclass(frozen=True)
class RunCluster:
    """A cluster one run ran on: its days there, GPU-hours, share of the cluster's allocated
    GPU-hours on those days and effective cost."""

    cluster: str
    currency: str | None
    first_day: date
    last_day: date
    days: int
    gpu_hours: Decimal
    share: float | None
    effective_cost: Decimal
    idle_cost: Decimal


def load_clusters(conn: duckdb.DuckDBPyConnection) -> list[ClusterReport]:
    """Every cluster with its days and runs, by name and currency."""
    days = dict_rows(conn.execute(read_sql("reports/cluster_utilization", "days")))
    runs = dict_rows(conn.execute(read_sql("marts/run_cluster_share", "summary")))
    runs_by_cluster: dict[tuple[str, str | None], list[ClusterRunShare]] = {}
    for row in runs:
        key = (row.pop("cluster"), row.pop("currency"))
        runs_by_cluster.setdefault(key, []).append(ClusterRunShare(**row))
    clusters = []
    for (cluster, currency), rows in groupby(days, key=lambda row: (row["cluster"], row["currency"])):
        cluster_days = tuple(
            ClusterDay(**{name: value for name, value in row.items() if name not in ("cluster", "currency")})
            for row in rows
        )
        clusters.append(
            ClusterReport(cluster, currency, cluster_days, tuple(runs_by_cluster.get((cluster, currency), ())))
        )
    return clusters


def load_run_clusters(conn: duckdb.DuckDBPyConnection, training_runs: Sequence[str]) -> dict[str, list[RunCluster]]:
    """The clusters each run ran on (every run asked for has an entry)."""
    clusters: dict[str, list[RunCluster]] = {training_run: [] for training_run in training_runs}
    if not training_runs:
        return clusters
    rows = dict_rows(conn.execute(read_sql("reports/run_clusters"), {"training_runs": list(training_runs)}))
    for row in rows:
        clusters[row.pop("training_run")].append(RunCluster(**row))
    return clusters


def cluster_sections(
    clusters: Sequence[ClusterReport], charts: Mapping[str, Chart], links: Mapping[str, str | None]
) -> tuple[Section, ...]:
    """A section per cluster: its totals, utilization chart, days and runs.

    Args:
        clusters: every cluster.
        charts: their rendered utilization charts by `ClusterReport.chart_name`.
        links: each run's report link, where it has one.
    """
    return tuple(
        Section(f"Cluster {cluster.cluster}", _cluster_blocks(cluster, charts.get(cluster.chart_name), links))
        for cluster in clusters
    )


def _cluster_blocks(cluster: ClusterReport, chart: Chart | None, links: Mapping[str, str | None]) -> tuple[Block, ...]:
    currency = cluster.currency or ""
    capacity = sum((day.capacity_gpu_hours for day in cluster.days), Decimal(0))
    allocated = sum((day.allocated_gpu_hours for day in cluster.days), Decimal(0))
    idle = sum((day.idle_gpu_hours for day in cluster.days), Decimal(0))
    idle_cost = sum((day.idle_cost for day in cluster.days), Decimal(0))
    overhead = sum((day.overhead_cost for day in cluster.days), Decimal(0))
    utilization = allocated / capacity if capacity else None
    first, last = cluster.days[0].day, cluster.days[-1].day
    summary = Paragraph(
        f"{first:%Y-%m-%d} to {last:%Y-%m-%d} ({len(cluster.days)} days): jobs held {hours(allocated)} of "
        f"the nodes' {hours(capacity)} GPU-hours, a utilization of {percent(utilization)}; idle "
        f"{hours(idle)} GPU-hours cost {money(idle_cost)} {currency}."
    )
    with_overhead = any(day.overhead_cost for day in cluster.days)
    day_rows = [
        _day_row(
            Cell(f"{day.day:%Y-%m-%d}"),
            day.capacity_gpu_hours,
            day.allocated_gpu_hours,
            day.idle_gpu_hours,
            day.utilization,
            day.idle_cost,
            day.overhead_cost if with_overhead else None,
        )
        for day in cluster.days
    ]
    total = _day_row(
        Cell("Total"), capacity, allocated, idle, utilization, idle_cost, overhead if with_overhead else None
    )
    days = Table(
        columns=(
            "Day (UTC)",
            "Capacity GPU-h",
            "Allocated GPU-h",
            "Idle GPU-h",
            "Utilization",
            f"Idle cost ({currency})",
            *((f"System overhead ({currency})",) if with_overhead else ()),
        ),
        rows=(*day_rows, total),
        numeric_columns=frozenset(range(1, 7 if with_overhead else 6)),
        emphasized_rows=1,
    )
    return (summary, *((chart,) if chart else ()), days, *_runs_blocks(cluster, links), Paragraph(IDLE_NOTE))


def _day_row(label: Cell, *values: Decimal | None) -> tuple[Cell, ...]:
    capacity, allocated, idle, utilization, idle_cost, overhead = values
    cells = [label, Cell(hours(capacity)), Cell(hours(allocated)), Cell(hours(idle)), Cell(percent(utilization))]
    cells.append(Cell(money(idle_cost)))
    if overhead is not None:
        cells.append(Cell(money(overhead)))
    return tuple(cells)


def _runs_blocks(cluster: ClusterReport, links: Mapping[str, str | None]) -> tuple[Block, ...]:
    if not cluster.runs:
        return (Paragraph("No job on the cluster named a run."),)
    with_idle = any(run.idle_cost for run in cluster.runs)
    currency = cluster.currency or ""
    rows = tuple(
        (
            Cell(run.training_run or NO_RUN, link=links.get(run.training_run) if run.training_run else None),
            Cell(hours(run.gpu_hours)),
            Cell(percent(run.share)),
            Cell(money(run.effective_cost)),
            *((Cell(money(run.idle_cost)),) if with_idle else ()),
        )
        for run in cluster.runs
    )
    table = Table(
        columns=(
            "Run",
            "GPU-hours",
            "Share",
            f"Effective cost ({currency})",
            *((f"of which idle ({currency})",) if with_idle else ()),
        ),
        rows=rows,
        numeric_columns=frozenset(range(1, 5 if with_idle else 4)),
    )
    note = SHARE_NOTE + (", its share of the idle cost included." if with_idle else ".")
    return table, Paragraph(note)


def run_cluster_blocks(clusters: Sequence[RunCluster]) -> tuple[Block, ...]:
    """The clusters a run ran on as a table; none when it ran on none."""
    if not clusters:
        return ()
    with_idle = any(cluster.idle_cost for cluster in clusters)
    rows = tuple(
        (
            Cell(cluster.cluster),
            Cell(f"{cluster.first_day:%Y-%m-%d} to {cluster.last_day:%Y-%m-%d} ({cluster.days})"),
            text_cell(cluster.currency),
            Cell(hours(cluster.gpu_hours)),
            Cell(percent(cluster.share)),
            Cell(money(cluster.effective_cost)),
            *((Cell(money(cluster.idle_cost)),) if with_idle else ()),
        )
        for cluster in clusters
    )
    table = Table(
        columns=(
            "Cluster",
            "Days (UTC)",
            "Currency",
            "GPU-hours",
            "Share of the cluster",
            "Effective cost",
            *(("of which idle",) if with_idle else ()),
        ),
        rows=rows,
        numeric_columns=frozenset(range(3, 7 if with_idle else 6)),
    )
    note = Paragraph(
        "Share of the cluster: of the GPU-hours all jobs held on the cluster on the days the run "
        "held GPUs there. Effective cost: the run's part of the nodes' bill lines, split by GPU-seconds"
        + (", its share of the idle cost included." if with_idle else ".")
    )
    return table, note
