"""The nightly job fanned out over billing periods with Dagster's multiprocess executor, into one
lake whose catalog is PostgreSQL (the team setup: its writers need no lock).

One step per billing period loads that period's delivery into the lake, in its own process (the
same checked, atomic replacement as the nightly job's raw asset, one commit per period), up to
`processes` steps at a time; then one step runs the rest of the nightly job, whose ingest finds
every delivery already loaded. The harness runs it with one process and with two;
`python -m bench scale-out` runs the load steps alone (`parallel_loads`), one DuckDB thread each.
"""

from dataclasses import dataclass
from datetime import UTC, date, datetime
from pathlib import Path

import dagster as dg

from bench.generate import BILLING_PERIODS
from pipelines.config import load_config
from pipelines.ingest.load import replace_period
from pipelines.ingest.readers import reader_for
from pipelines.nightly import run_nightly
from pipelines.sources.mappings import read_mapping_rules
from pipelines.warehouse.connection import connect, limit_duckdb
from pipelines.warehouse.locks import writer_lock

LOAD_STEP_PREFIX = "load_"


@dataclass(frozen=True)
class DuckDBLimits:
    """What the bench sets in every process of a measured job instead of the product's defaults
    (`pipelines.warehouse.connection.limit_duckdb`).

    Attributes:
        memory_limit: DuckDB's memory limit (e.g. "2GiB"); None: MEMORY_LIMIT.
        threads: DuckDB's threads; None: one per core.
    """

    memory_limit: str | None = None
    threads: int | None = None

    def apply(self) -> None:
        """Sets them in this process (before its first connection)."""
        limit_duckdb(memory_limit=self.memory_limit, threads=self.threads)

    def arguments(self) -> list[str]:
        """The options of `python -m bench nightly` that set them in the measured process."""
        arguments = []
        if self.memory_limit is not None:
            arguments += ["--memory-limit", self.memory_limit]
        if self.threads is not None:
            arguments += ["--threads", str(self.threads)]
        return arguments


class StepConfig(dg.Config):
    """Attributes:
    config_path: the data set's runledger.yaml.
    memory_limit: DuckDB's memory limit in the step's process (None: the product's).
    threads: DuckDB's threads in the step's process (None: one per core).
    """

    config_path: str
    memory_limit: str | None = None
    threads: int | None = None

    def limit_duckdb(self) -> None:
        DuckDBLimits(self.memory_limit, self.threads).apply()


class LoadPeriodConfig(StepConfig):
    """One billing period of one configuration.

    Attributes:
        billing_period: first day of the period (YYYY-MM-DD).
    """

    billing_period: str


class FinishConfig(StepConfig):
    """The rest of the nightly job."""


@dg.op(description="Loads every source's delivery of one billing period into the lake, one commit per source.")
def load_period(config: LoadPeriodConfig) -> str:
    config.limit_duckdb()
    runledger_config = load_config(Path(config.config_path))
    billing_period = date.fromisoformat(config.billing_period)
    rules = read_mapping_rules(runledger_config.cost_categories_path, runledger_config.gpu_instance_table())
    with writer_lock(runledger_config.lake):
        conn = connect(runledger_config.lake)
        try:
            for source in runledger_config.billing_sources:
                reader = reader_for(source, runledger_config, warehouse=conn)
                replace_period(conn, reader.batch(billing_period, rules, datetime.now(UTC).replace(tzinfo=None)))
        finally:
            conn.close()
    return config.billing_period


@dg.op(description="Runs the rest of the nightly job once every period is loaded.")
def finish(config: FinishConfig, loaded_periods: list[str]) -> None:
    config.limit_duckdb()
    run_nightly(Path(config.config_path), echo=lambda line: print(line, flush=True))


def load_step_name(billing_period: date) -> str:
    return f"{LOAD_STEP_PREFIX}{billing_period:%Y_%m}"


@dg.job(executor_def=dg.multiprocess_executor)
def parallel_nightly() -> None:
    """Each billing period loaded by its own process, then the rest of the nightly job."""
    finish([load_period.alias(load_step_name(period))() for period in BILLING_PERIODS])


@dg.job(executor_def=dg.multiprocess_executor)
def parallel_loads() -> None:
    """Each billing period loaded by its own process: the work that fans out over workers."""
    for period in BILLING_PERIODS:
        load_period.alias(load_step_name(period))()


def parallel_run_config(
    config_path: Path, processes: int, limits: DuckDBLimits | None = None, *, finish: bool = True
) -> dict:
    """The run config of `parallel_nightly` (or, without `finish`, of `parallel_loads`) for one
    data set, with at most `processes` steps at once, each within `limits`."""
    limits = limits or DuckDBLimits()
    step = {"config_path": str(config_path), "memory_limit": limits.memory_limit, "threads": limits.threads}
    ops = {
        load_step_name(period): {"config": {**step, "billing_period": period.isoformat()}} for period in BILLING_PERIODS
    }
    if finish:
        ops["finish"] = {"config": step}
    return {"ops": ops, "execution": {"config": {"max_concurrent": processes}}}
