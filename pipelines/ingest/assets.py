"""Ingest assets: every configured billing source's delivery of a period into focus_line_items."""

from datetime import date, datetime, timezone

import dagster as dg
import duckdb

from connectors.aws_cur import DeliveryNotReady
from pipelines.config import BillingSource
from pipelines.ingest.load import loaded_delivery, record_read_failure, record_skipped_load, replace_period
from pipelines.ingest.mappings import CategoryRule, read_category_rules
from pipelines.ingest.sources import DeliveryIdentifying, reader_for
from pipelines.partitions import billing_period_of, billing_periods
from pipelines.resources import WAREHOUSE_POOL, RunLedgerResource


def _skip_delivery(
    context: dg.AssetExecutionContext,
    conn: duckdb.DuckDBPyConnection,
    reader: DeliveryIdentifying,
    source: BillingSource,
    billing_period: date,
    rules: list[CategoryRule],
) -> bool:
    """True (and recorded in `loads`) when the period's latest delivery is the one already loaded,
    or when the export is being rewritten and must not be read; the period's rows stay."""
    try:
        delivery = reader.delivery_identity(billing_period, rules)
    except DeliveryNotReady as error:
        record_skipped_load(conn, source.name, source.kind, billing_period, delivery=None, status="not_ready", reason=str(error))
        context.log.warning(f"{source.name} {billing_period:%Y-%m}: not loaded, previous rows kept: {error}")
        return True
    except Exception as error:
        record_read_failure(conn, source.name, source.kind, billing_period, error)
        raise
    if delivery != loaded_delivery(conn, source.name, billing_period):
        return False
    record_skipped_load(
        conn, source.name, source.kind, billing_period, delivery=delivery, status="unchanged", reason="delivery already loaded"
    )
    context.log.info(f"{source.name} {billing_period:%Y-%m}: delivery unchanged since its last load ({delivery})")
    return True


@dg.asset(
    partitions_def=billing_periods,
    group_name="ingest",
    owners=["team:finops"],
    kinds={"polars", "duckdb"},
    pool=WAREHOUSE_POOL,
)
def focus_line_items(context: dg.AssetExecutionContext, runledger: RunLedgerResource) -> dg.MaterializeResult:
    """Billing line items on the FOCUS 1.2 model, one billing period of every billing source.

    Each source's delivery of the period (for AWS: only the files its latest manifest lists) is
    normalized with polars, streamed to a staging file, and replaces the previous rows of that
    (source, period) in one transaction, after its row count and BilledCost matched the raw
    export's control totals. An AWS delivery identical to the one already loaded is skipped.
    Each load (or skip) is recorded in `loads`.
    """
    billing_period = billing_period_of(context.partition_key)
    config = runledger.load_config()
    rules = read_category_rules(config.cost_categories_path)
    ingested_at = datetime.now(timezone.utc).replace(tzinfo=None)
    loaded = {}
    with runledger.warehouse(config) as conn:
        for source in config.billing_sources:
            reader = reader_for(source, config)
            if billing_period not in reader.billing_periods():
                context.log.info(f"{source.name}: no delivery for {billing_period:%Y-%m}")
                continue
            if isinstance(reader, DeliveryIdentifying) and _skip_delivery(context, conn, reader, source, billing_period, rules):
                continue
            try:
                batch = reader.batch(billing_period, rules, ingested_at)
            except Exception as error:
                record_read_failure(conn, source.name, source.kind, billing_period, error)
                raise
            for warning in batch.warnings:
                context.log.warning(f"{source.name} {billing_period:%Y-%m}: {warning}")
            result = replace_period(conn, batch, config.warehouse_path.parent / "staging")
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
