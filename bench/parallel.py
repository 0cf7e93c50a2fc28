"""The nightly job fanned out over billing periods with Dagster's multiprocess executor, into one
lake whose catalog is PostgreSQL (the team setup: its writers need no lock).

One step per billing period loads that period's delivery into the lake, in its own process (the
same checked, atomic replacement as the nightly job's raw asset, one commit per period), up to
`processes` steps at a time; then one step runs the rest of the nightly job, whose ingest finds
every delivery already loaded. The harness runs it with one process and with two.
"""

from datetime import UTC, date, datetime
from pathlib import Path

import dagster as dg

from bench.generate import BILLING_PERIODS
from pipelines.config import load_config
from pipelines.ingest.load import replace_period
from pipelines.ingest.readers import reader_for
from pipelines.nightly import run_nightly
from pipelines.sources.mappings import read_mapping_rules
from pipelines.warehouse.connection import connect
from pipelines.warehouse.locks import writer_lock

LOAD_STEP_PREFIX = "load_"


class LoadPeriodConfig(dg.Config):
    """One billing period of one configuration.

    Attributes:
        config_path: the data set's runledger.yaml.
        billing_period: first day of the period (YYYY-MM-DD).
    """

    config_path: str
    billing_period: str


class FinishConfig(dg.Config):
    """Attributes:
    config_path: the data set's runledger.yaml.
    """

    config_path: str


@dg.op(description="Loads every source's delivery of one billing period into the lake, one commit per source.")
def load_period(config: LoadPeriodConfig) -> str:
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
    run_nightly(Path(config.config_path), echo=lambda line: print(line, flush=True))


def load_step_name(billing_period: date) -> str:
    return f"{LOAD_STEP_PREFIX}{billing_period:%Y_%m}"


@dg.job(executor_def=dg.multiprocess_executor)
def parallel_nightly() -> None:
    """Each billing period loaded by its own process, then the rest of the nightly job."""
    finish([load_period.alias(load_step_name(period))() for period in BILLING_PERIODS])


def parallel_run_config(config_path: Path, processes: int) -> dict:
    """The run config of `parallel_nightly` for one data set, with at most `processes` steps at once."""
    ops = {
        load_step_name(period): {"config": {"config_path": str(config_path), "billing_period": period.isoformat()}}
        for period in BILLING_PERIODS
    }
    ops["finish"] = {"config": {"config_path": str(config_path)}}
    return {"ops": ops, "execution": {"config": {"max_concurrent": processes}}}
