"""Ingest assets: every configured billing source's delivery of a period into focus_line_items."""

from datetime import datetime, timezone

import dagster as dg

from pipelines.ingest.load import record_read_failure, replace_period
from pipelines.ingest.mappings import read_category_rules
from pipelines.ingest.sources import reader_for
from pipelines.partitions import billing_period_of, billing_periods
from pipelines.resources import WAREHOUSE_POOL, RunLedgerResource


class IngestConfig(dg.Config):
    """How a run reads incremental sources (the GCP BigQuery export).

    Attributes:
        full_refresh: re-read the period from every source whatever the export_time watermark
            says (repairs); by default only periods with newly exported rows are re-read.
    """

    full_refresh: bool = False


@dg.asset(
    partitions_def=billing_periods,
    group_name="ingest",
    owners=["team:finops"],
    kinds={"polars", "duckdb"},
    pool=WAREHOUSE_POOL,
)
def focus_line_items(
    context: dg.AssetExecutionContext, config: IngestConfig, runledger: RunLedgerResource
) -> dg.MaterializeResult:
    """Billing line items on the FOCUS 1.2 model, one billing period of every billing source.

    Each source's delivery of the period (for AWS: only the files its latest manifest lists) is
    normalized with polars, streamed to a staging file, and replaces the previous rows of that
    (source, period) in one transaction, after its row count and BilledCost matched the raw
    export's control totals. Each load is recorded in `loads`. The GCP BigQuery export is
    re-read only when the period has rows exported after its watermark, unless
    `full_refresh` is set.
    """
    billing_period = billing_period_of(context.partition_key)
    settings = runledger.load_config()
    rules = read_category_rules(settings.cost_categories_path)
    ingested_at = datetime.now(timezone.utc).replace(tzinfo=None)
    loaded = {}
    with runledger.warehouse(settings) as conn:
        for source in settings.billing_sources:
            reader = reader_for(source, settings, warehouse=conn, full_refresh=config.full_refresh)
            if billing_period not in reader.billing_periods():
                context.log.info(f"{source.name}: no delivery or nothing new for {billing_period:%Y-%m}")
                continue
            try:
                batch = reader.batch(billing_period, rules, ingested_at)
            except Exception as error:
                record_read_failure(conn, source.name, source.kind, billing_period, error)
                raise
            result = replace_period(conn, batch, settings.warehouse_path.parent / "staging")
            context.log.info(
                f"{source.name} {billing_period:%Y-%m}: loaded {result.rows:,} line items from {result.files} files, "
                f"BilledCost {result.billed_cost:,.2f} {result.currency}, EffectiveCost {result.effective_cost:,.2f}"
            )
            loaded[source.name] = result
    return dg.MaterializeResult(
        metadata={
            "rows": dg.MetadataValue.int(sum(r.rows for r in loaded.values())),
            "sources_loaded": dg.MetadataValue.int(len(loaded)),
            "loads": dg.MetadataValue.md(
                "| source | rows | files | billed | effective | currency |\n|---|---:|---:|---:|---:|---|\n"
                + "\n".join(
                    f"| {r.source_name} | {r.rows:,} | {r.files} | {r.billed_cost:,.2f} | {r.effective_cost:,.2f} | {r.currency} |"
                    for r in loaded.values()
                )
            ),
        }
    )
