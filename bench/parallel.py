"""The nightly job fanned out over billing periods with Dagster's multiprocess executor.

DuckDB lets one process write a database file, so the periods do not each write the warehouse:
one step per billing period reads its delivery and normalizes it into a staging Parquet file,
these steps run in parallel processes; then a single step loads the staged files (the same
checked, atomic replacement as the nightly job) and runs the rest of the nightly job, whose
ingest then finds every delivery already loaded.
"""

from datetime import UTC, date, datetime
from pathlib import Path

import dagster as dg

from bench.generate import BILLING_PERIODS
from pipelines.config import load_config
from pipelines.ingest.load import replace_period, stage_batch
from pipelines.ingest.mappings import read_category_rules
from pipelines.ingest.readers import reader_for
from pipelines.nightly import run_nightly
from pipelines.warehouse.connection import connect
from pipelines.warehouse.locks import writer_lock


class StagePeriodConfig(dg.Config):
    """One billing period of one configuration.

    Attributes:
        config_path: the data set's runledger.yaml.
        billing_period: first day of the period (YYYY-MM-DD).
    """

    config_path: str
    billing_period: str


class LoadConfig(dg.Config):
    """Attributes:
    config_path: the data set's runledger.yaml.
    """

    config_path: str


@dg.op(description="Normalizes every source's delivery of one billing period into staging Parquet files.")
def stage_period(config: StagePeriodConfig) -> list[dict]:
    runledger_config = load_config(Path(config.config_path))
    billing_period = date.fromisoformat(config.billing_period)
    rules = read_category_rules(runledger_config.cost_categories_path)
    staged = []
    for source in runledger_config.billing_sources:
        batch = reader_for(source, runledger_config).batch(
            billing_period, rules, datetime.now(UTC).replace(tzinfo=None)
        )
        staged_folder = stage_batch(batch, runledger_config.lake.staging_dir)
        staged.append({"source": source.name, "billing_period": config.billing_period, "folder": str(staged_folder)})
    return staged


@dg.op(description="Loads the staged periods into the warehouse (one writer), then runs the rest of the nightly job.")
def load_and_finish(config: LoadConfig, staged_periods: list[list[dict]]) -> None:
    runledger_config = load_config(Path(config.config_path))
    rules = read_category_rules(runledger_config.cost_categories_path)
    sources = {source.name: source for source in runledger_config.billing_sources}
    with writer_lock(runledger_config.lake):
        conn = connect(runledger_config.lake)
        try:
            for staged in (entry for period in staged_periods for entry in period):
                reader = reader_for(sources[staged["source"]], runledger_config, warehouse=conn)
                billing_period = date.fromisoformat(staged["billing_period"])
                batch = reader.batch(billing_period, rules, datetime.now(UTC).replace(tzinfo=None))
                replace_period(conn, batch, staged=Path(staged["folder"]))
        finally:
            conn.close()
    run_nightly(Path(config.config_path), echo=lambda line: print(line, flush=True))


def stage_step_name(billing_period: date) -> str:
    return f"stage_{billing_period:%Y_%m}"


@dg.job(executor_def=dg.multiprocess_executor.configured({"max_concurrent": 2}))
def parallel_nightly() -> None:
    """Staging of each billing period in parallel processes, then one writer."""
    load_and_finish([stage_period.alias(stage_step_name(period))() for period in BILLING_PERIODS])


def parallel_run_config(config_path: Path) -> dict:
    """The run config of `parallel_nightly` for one data set."""
    ops = {
        stage_step_name(period): {"config": {"config_path": str(config_path), "billing_period": period.isoformat()}}
        for period in BILLING_PERIODS
    }
    ops["load_and_finish"] = {"config": {"config_path": str(config_path)}}
    return {"ops": ops}
