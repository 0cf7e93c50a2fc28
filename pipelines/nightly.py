"""The nightly job run in process: the asset graph of `pipelines.definitions`, built from the same
configuration, materialized for the given billing periods (default: every period found in the
sources)."""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import closing, contextmanager
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from pathlib import Path

import dagster as dg

from connectors.errors import SourceError
from pipelines.budgets.assets import THRESHOLD_CHECK_KEYS
from pipelines.config import RunLedgerConfig, load_config
from pipelines.definitions import NIGHTLY_JOB, build_asset_graph, nightly_job
from pipelines.ingest.readers import reader_for
from pipelines.orchestration.partitions import partition_key, unpartitioned_reason
from pipelines.orchestration.resources import RunLedgerResource
from pipelines.warehouse.connection import connect, connect_read_only, require_current_format
from pipelines.warehouse.lake import LakeError
from pipelines.warehouse.repair import require_whole

QUIET_LOGS = {"loggers": {"console": {"config": {"log_level": "CRITICAL"}}}}


class RunFailed(RuntimeError):
    """The nightly job failed; the message says which step and why."""


@dataclass(frozen=True)
class NightlyResult:
    billing_periods: list[date]
    reports: list[str]


# (stages done, stages in all, the stage starting): what a progress bar shows.
Progress = Callable[[int, int, str], None]


@dataclass
class StageLog:
    """The lines of a run, for a terminal or a log: each starts with the UTC time, and the line
    that ends a stage says how many seconds it took.

    Attributes:
        echo: where the lines go.
        stages: the stages the run has: the inputs, each billing period, then the rest.
        progress: told when a stage starts, for a progress bar; None for none.
    """

    echo: Callable[[str], None]
    stages: int
    progress: Progress | None = None
    done: int = 0
    started: float = field(default_factory=time.monotonic)
    stage_started: float = field(default_factory=time.monotonic)

    def line(self, text: str) -> None:
        """One line, stamped with the current UTC time to the second."""
        self.echo(f"{datetime.now(UTC):%Y-%m-%dT%H:%M:%SZ} {text}")

    def begin(self, stage: str) -> None:
        """A stage starts: its clock starts and the progress bar names it."""
        self.stage_started = time.monotonic()
        if self.progress is not None:
            self.progress(self.done, self.stages, stage)

    def end(self, text: str) -> None:
        """The stage's last line, with the seconds since it began."""
        self.done += 1
        self.line(f"{text} ({time.monotonic() - self.stage_started:.1f} s)")

    def finish(self) -> None:
        """The run's last line: the seconds since it started."""
        if self.progress is not None:
            self.progress(self.done, self.stages, "done")
        self.line(f"runledger: done in {time.monotonic() - self.started:.1f} s")


def discover_billing_periods(config: RunLedgerConfig, full_refresh: bool = False) -> list[date]:
    """Every billing period any configured billing source has data for (for the BigQuery
    export: the periods with rows exported after its watermark, unless `full_refresh`).

    Raises:
        SourceError: a source holds rows of a period that has no partition, naming the first
            such row; the run stops before it loads anything.
    """
    periods: set[date] = set()
    try:
        warehouse = connect_read_only(config.lake)
    except LakeError:  # no lake yet: every period is new
        warehouse = None
    try:
        for source in config.billing_sources:
            reader = reader_for(source, config, warehouse=warehouse, full_refresh=full_refresh)
            found = reader.billing_periods()
            for period in found:
                reason = unpartitioned_reason(period)
                if reason is not None:
                    raise SourceError(
                        f"{reader.first_row_of(period)}: {reason}; remove the period's rows from the export of "
                        f"source {source.name}, or load the other periods with --period; nothing was loaded"
                    )
            periods.update(found)
    finally:
        if warehouse is not None:
            warehouse.close()
    return sorted(periods)


def _metadata(result: dg.ExecuteInProcessResult, asset: str) -> dict[str, object]:
    materializations = result.asset_materializations_for_node(asset)
    if not materializations:
        return {}
    return {key: value.value for key, value in materializations[-1].metadata.items()}


def _failed_checks(
    result: dg.ExecuteInProcessResult, severity: dg.AssetCheckSeverity | None, *, alerts: bool = False
) -> list[str]:
    """The failed checks of a severity (None: any), either the threshold checks of budget_alerts
    (`alerts`) or the others."""
    return [
        f"{evaluation.asset_key.to_user_string()}.{evaluation.check_name}: "
        f"{evaluation.description or evaluation.metadata}"
        for evaluation in result.get_asset_check_evaluations()
        if not evaluation.passed
        and (severity is None or evaluation.severity == severity)
        and (evaluation.asset_check_key in THRESHOLD_CHECK_KEYS) == alerts
    ]


def _materialize(
    job: dg.JobDefinition,
    selection: Sequence[dg.AssetsDefinition],
    log: StageLog,
    instance: dg.DagsterInstance | None,
    partition: str | None = None,
    run_config: dict | None = None,
) -> dg.ExecuteInProcessResult:
    """One stage of the nightly job, run in process as a run of `runledger_nightly` (its tags
    included) with the stage's assets selected."""
    result = job.execute_in_process(
        asset_selection=[key for asset in selection for key in asset.keys],
        partition_key=partition,
        run_config={**QUIET_LOGS, **(run_config or {})},
        instance=instance,
    )
    for warning in _failed_checks(result, dg.AssetCheckSeverity.WARN):
        log.line(f"  warning: {warning}")
    # a threshold reached is news for the run's owner, not a fault of the run: it never fails it
    for alert in _failed_checks(result, None, alerts=True):
        log.line(f"  alert: {alert}")
    failed = _failed_checks(result, dg.AssetCheckSeverity.ERROR)
    if failed:
        raise RunFailed("blocking check failed: " + "; ".join(failed))
    return result


@contextmanager
def _instance() -> Iterator[dg.DagsterInstance | None]:
    """The Dagster instance of `$DAGSTER_HOME` when it is set, so cron runs land in the same
    event log, asset catalog and concurrency pool as `make dev`; else none (an ephemeral
    instance per step group)."""
    if not os.environ.get("DAGSTER_HOME"):
        yield None
        return
    with dg.DagsterInstance.get() as instance:
        yield instance


def run_nightly(
    config_path: Path | None,
    periods: Sequence[date] = (),
    echo: Callable[[str], None] = print,
    full_refresh: bool = False,
    progress: Progress | None = None,
    take_over_lake: bool = False,
) -> NightlyResult:
    """Ingest, normalize, attribute, compare with budgets and write reports.

    Args:
        config_path: the `runledger.yaml`; None means `$RUNLEDGER_CONFIG`, then `./runledger.yaml`.
        periods: billing periods (first day of the month); empty means every period found.
        echo: where the stage lines go (`StageLog`: UTC time first, each stage's seconds last).
        full_refresh: re-read the periods from incremental sources (the BigQuery export) whatever
            their watermark says.
        progress: told when each stage starts, for a progress bar on a terminal.
        take_over_lake: this configuration replaces the one that owns the lake (`claim_lake`).

    Raises:
        ConfigError: the configuration is invalid (exit 2 in the CLI).
        LakeError: the lake holds a warehouse file of an earlier version (exit 2 in the CLI).
        DamagedLake: a data file of the lake is missing or damaged (`runledger repair`).
        LakeError: another configuration owns the lake (exit 2 in the CLI).
        RunFailed: a blocking check failed (exit 1 in the CLI); a failing step raises its own
            error (SourceError, LoadError, ConservationError, duckdb.Error …).
    """
    config = load_config(config_path, writer=True)
    require_current_format(config.lake)
    if config.lake.exists():
        with closing(connect(config.lake)) as conn:
            require_whole(conn, config.lake)
    graph = build_asset_graph(config)
    resources = {
        "runledger": RunLedgerResource(
            config_path=str(config_path.resolve()) if config_path else None, take_over_lake=take_over_lake
        )
    }
    job = dg.Definitions(
        assets=graph.assets, jobs=[nightly_job(graph)], resources=resources, executor=dg.in_process_executor
    ).resolve_job_def(NIGHTLY_JOB)
    billing_periods = sorted(periods) or discover_billing_periods(config, full_refresh)
    ingest_config = {
        "ops": {asset.op.name: {"config": {"full_refresh": full_refresh}} for asset in graph.source_loads.values()}
    }
    period_names = ", ".join(f"{p:%Y-%m}" for p in billing_periods) or "none"
    log = StageLog(echo, stages=len(billing_periods) + 2, progress=progress)
    log.line(f"runledger: {len(config.billing_sources)} billing sources, billing periods {period_names}")

    with _instance() as instance:
        log.begin("inputs")
        result = _materialize(job, graph.pre_partition, log, instance)
        runs = _metadata(result, "run_registry").get("runs", 0)
        plans = _metadata(result, "budget_baselines")
        budgets = plans.get("budgets", 0)
        groups = plans.get("group_budgets", 0)
        group_budgets = f", {groups} group budgets" if groups else ""
        events = _metadata(result, "run_events").get("events", 0)
        intervals = _metadata(result, "cluster_usage").get("intervals", 0)
        clusters = f"; cluster usage intervals: {intervals:,}" if config.scheduler_sources else ""
        gpu_hours = _metadata(result, "gpu_utilization").get("gpu_hours", 0)
        telemetry = f"; GPU telemetry: {gpu_hours:,} GPU-hours" if config.telemetry_sources else ""
        log.end(
            f"  run registry: {runs} runs; budgets: {budgets} baselines{group_budgets}; run events: {events:,}"
            f"{clusters}{telemetry}"
        )
        for period in billing_periods:
            log.begin(f"{period:%Y-%m}")
            result = _materialize(job, graph.partitioned, log, instance, partition_key(period), ingest_config)
            loaded = _metadata(result, "focus_line_items")
            allocated = _metadata(result, "cost_allocations")
            log.end(
                f"  {period:%Y-%m}: {loaded.get('rows', 0):,} line items from {loaded.get('sources_loaded', 0)} "
                f"sources, {allocated.get('rows', 0):,} allocations, conservation ok"
            )
        log.begin("reconciliation, budgets, waste, reports")
        result = _materialize(job, graph.post_partition, log, instance)
    log.line(
        f"  reconciliation: {_metadata(result, 'reconciliation').get('rows', 0)} source periods, all differences 0"
    )
    log.line(f"  budget variance: {_metadata(result, 'budget_variance').get('rows', 0)} rows")
    log.line(f"  budget alerts: {_metadata(result, 'budget_alerts').get('rows', 0)} threshold crossings")
    deliveries = _metadata(result, "alert_deliveries")
    if deliveries.get("destinations"):
        log.line(
            f"  alert deliveries: {deliveries.get('delivered', 0)} delivered, {deliveries.get('failed', 0)} failed"
        )
        for failure in deliveries.get("failures", []):
            log.line(f"  warning: alert not delivered: {failure}; the next run tries again")
    log.line(f"  waste: {_metadata(result, 'waste').get('rows', 0)} items")
    log.line(f"  variance causes: {_metadata(result, 'variance_causes').get('rows', 0)} rows")
    log.line(f"  recommendations: {_metadata(result, 'recommendations').get('rows', 0)} rows")
    log.line(
        f"  provisional spend: {_metadata(result, 'provisional_spend').get('rows', 0)} runs with spend not billed yet"
    )
    reports_written = _metadata(result, "post_mortem_reports")
    log.end(
        f"  reports: {reports_written.get('files', 0)} files; {reports_written.get('rendered', 'nothing rendered')}"
    )
    log.finish()
    reports = reports_written.get("paths", [])
    return NightlyResult(billing_periods=billing_periods, reports=list(reports))
