"""Ingest assets: one raw load per configured billing source, and `focus_line_items` per period.

The per-source assets are built from `runledger.yaml` when the code location loads (see
`pipelines.definitions`): each loads its source's delivery of a billing period into
`focus_line_items` and carries the schema-drift and freshness checks of that source.
"""

import re
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal

import dagster as dg
import duckdb

from connectors.aws.exports import DeliveryNotReady
from connectors.errors import SourceError
from pipelines.config import RunLedgerConfig
from pipelines.config_rules import ConfigError
from pipelines.ingest.load import (
    LoadResult,
    loaded_delivery,
    record_read_failure,
    record_skipped_load,
    replace_period,
)
from pipelines.ingest.readers import reader_for
from pipelines.orchestration.partitions import billing_period_of, billing_periods
from pipelines.orchestration.resources import WAREHOUSE_POOL, RunLedgerResource
from pipelines.orchestration.retries import retry_request
from pipelines.orchestration.tables import holds_tables
from pipelines.sources.base import BillingSourceReader, DeliveryIdentifying, PeriodBatch
from pipelines.sources.kind import SourceSettings
from pipelines.sources.mappings import MappingRule, read_mapping_rules
from pipelines.sources.registry import column_drift, kind_of
from pipelines.warehouse.sql import read_sql

RAW_KEY_PREFIX = "raw"
SCHEMA_DRIFT_CHECK = "schema_drift"
FRESHNESS_CHECK = "freshness"
PREVIEW_ROWS = 10
FOCUS_LINE_ITEMS = dg.AssetKey("focus_line_items")
# What a raw load writes: its source's rows of the period, and a record of every attempt.
RAW_LOAD_TABLES = ("focus_line_items", "loads", "load_snapshots")


class IngestConfig(dg.Config):
    """How a raw load reads incremental sources (the GCP BigQuery export).

    Attributes:
        full_refresh: re-read the period whatever the export_time watermark says (repairs); by
            default only periods with newly exported rows are re-read.
    """

    full_refresh: bool = False


def source_asset_key(source_name: str) -> dg.AssetKey:
    """`raw/<source>`, with characters an asset key cannot hold written as `_`."""
    return dg.AssetKey([RAW_KEY_PREFIX, re.sub(r"[^A-Za-z0-9_]", "_", source_name)])


def _money_text(value: object) -> str:
    return f"{value:,.2f}" if isinstance(value, Decimal | int | float) else "–"


def _find_source(config: RunLedgerConfig, source_name: str) -> SourceSettings:
    for source in config.billing_sources:
        if source.name == source_name:
            return source
    raise ConfigError(
        f"{config.base_dir}: sources: no billing source named {source_name!r} any more; reload the code location"
    )


def _skip_delivery(
    context: dg.AssetExecutionContext,
    conn: duckdb.DuckDBPyConnection,
    reader: DeliveryIdentifying,
    source: SourceSettings,
    billing_period: date,
    rules: list[MappingRule],
) -> str | None:
    """Why the period is not reloaded (recorded in `loads`), or None to load it: its latest
    delivery is the one already loaded, or the export is being rewritten and must not be read;
    either way the period's rows stay."""
    try:
        delivery = reader.delivery_identity(billing_period, rules)
    except DeliveryNotReady as error:
        record_skipped_load(
            conn, source.name, source.kind, billing_period, delivery=None, status="not_ready", reason=str(error)
        )
        context.log.warning(f"{source.name} {billing_period:%Y-%m}: not loaded, previous rows kept: {error}")
        return "not ready"
    except Exception as error:
        record_read_failure(conn, source.name, source.kind, billing_period, error)
        raise
    if delivery != loaded_delivery(conn, source.name, billing_period):
        return None
    record_skipped_load(
        conn,
        source.name,
        source.kind,
        billing_period,
        delivery=delivery,
        status="unchanged",
        reason="delivery already loaded",
    )
    context.log.info(f"{source.name} {billing_period:%Y-%m}: delivery unchanged since its last load ({delivery})")
    return "unchanged"


def _load(
    context: dg.AssetExecutionContext, runledger: RunLedgerResource, source_name: str, full_refresh: bool
) -> tuple[LoadResult | None, list[dg.AssetCheckResult]]:
    """Loads the source's delivery of the partition's period, then evaluates its checks."""
    billing_period = billing_period_of(context.partition_key)
    config = runledger.load_config()
    source = _find_source(config, source_name)
    result = None
    with runledger.warehouse(config) as conn:
        reader = reader_for(source, config, warehouse=conn, full_refresh=full_refresh)
        delivered_periods = reader.billing_periods()
        rules = read_mapping_rules(config.cost_categories_path, config.gpu_instance_table())
        skipped = None
        if billing_period in delivered_periods and not full_refresh and isinstance(reader, DeliveryIdentifying):
            skipped = _skip_delivery(context, conn, reader, source, billing_period, rules)
        if skipped:
            drift = dg.AssetCheckResult(
                check_name=SCHEMA_DRIFT_CHECK,
                passed=True,
                severity=dg.AssetCheckSeverity.WARN,
                metadata={"delivery": f"{skipped}: not read for {billing_period:%Y-%m}"},
            )
        elif billing_period in delivered_periods:
            ingested_at = datetime.now(UTC).replace(tzinfo=None)
            try:
                batch = reader.batch(billing_period, rules, ingested_at)
            except Exception as error:
                record_read_failure(conn, source.name, source.kind, billing_period, error)
                raise
            for warning in batch.warnings:
                context.log.warning(f"{source.name} {billing_period:%Y-%m}: {warning}")
            result = replace_period(conn, batch)
            context.log.info(
                f"{source.name} {billing_period:%Y-%m}: loaded {result.rows:,} line items from {result.files} files, "
                f"BilledCost {result.billed_cost:,.2f} {result.currency}, EffectiveCost {result.effective_cost:,.2f}"
            )
            drift = _schema_drift_result(reader, billing_period, batch)
        else:
            context.log.info(f"{source.name}: no delivery or nothing new for {billing_period:%Y-%m}")
            drift = dg.AssetCheckResult(
                check_name=SCHEMA_DRIFT_CHECK,
                passed=True,
                severity=dg.AssetCheckSeverity.WARN,
                metadata={"delivery": f"none for {billing_period:%Y-%m}"},
            )
        (newest_charge,) = conn.execute(
            read_sql("staging/focus_line_items", "source_newest_charge"), {"source_name": source.name}
        ).fetchone()
    newest_period = max(delivered_periods, default=None)
    if newest_period is not None and billing_period < newest_period:
        freshness = dg.AssetCheckResult(
            check_name=FRESHNESS_CHECK,
            passed=True,
            severity=dg.AssetCheckSeverity.WARN,
            description=f"judged with the source's newest billing period, {newest_period:%Y-%m}",
            metadata={"newest_billing_period": f"{newest_period:%Y-%m}"},
        )
    else:
        freshness = _freshness_result(
            newest_charge, config.orchestration.freshness_max_age_hours, config.orchestration.freshness_as_of
        )
    return result, [drift, freshness]


def _schema_drift_result(reader: BillingSourceReader, billing_period: date, batch: PeriodBatch) -> dg.AssetCheckResult:
    """The drift of the columns the batch's files have, else of those the source declares (an AWS
    manifest, the BigQuery table, the files' schemas)."""
    if batch.columns:
        source_format, location, columns = batch.source_format, ", ".join(batch.files), list(batch.columns)
    else:
        try:
            source_format, location, columns = reader.delivery_columns(billing_period)
        except SourceError as error:
            # the rows are loaded and conserved: a delivery whose columns cannot be listed only warns
            return dg.AssetCheckResult(
                check_name=SCHEMA_DRIFT_CHECK,
                passed=False,
                severity=dg.AssetCheckSeverity.WARN,
                description=f"the delivered columns could not be compared: {error}",
                metadata={"format": batch.source_format, "delivery": ", ".join(batch.files)[:500]},
            )
    drift = column_drift(source_format, columns)
    return dg.AssetCheckResult(
        check_name=SCHEMA_DRIFT_CHECK,
        passed=not drift.drifted,
        severity=dg.AssetCheckSeverity.WARN,
        description=(
            f"missing: {', '.join(drift.missing) or 'none'}; new: {', '.join(drift.new) or 'none'}"
            if drift.drifted
            else f"all {len(columns)} columns as expected for {source_format}"
        ),
        metadata={
            "format": source_format,
            "delivery": location[:500],
            "missing_columns": dg.MetadataValue.json(list(drift.missing)),
            "new_columns": dg.MetadataValue.json(list(drift.new)),
        },
    )


def _freshness_result(
    newest_charge: datetime | None, max_age_hours: float, as_of: datetime | None
) -> dg.AssetCheckResult:
    """The source's newest charge against `max_age_hours`, its age taken at `as_of` (UTC, the
    configured `orchestration.freshness_as_of`), else now."""
    now = as_of or datetime.now(UTC).replace(tzinfo=None)
    age_hours = (now - newest_charge) / timedelta(hours=1) if newest_charge else None
    return dg.AssetCheckResult(
        check_name=FRESHNESS_CHECK,
        passed=age_hours is not None and age_hours <= max_age_hours,
        severity=dg.AssetCheckSeverity.WARN,
        description=(
            "no charges from this source in the warehouse"
            if age_hours is None
            else f"newest charge {newest_charge:%Y-%m-%d %H:%M} UTC, {age_hours:,.1f} h old"
            + (f" at {as_of:%Y-%m-%d %H:%M} UTC" if as_of else "")
            + f" (limit {max_age_hours:g} h)"
        ),
        metadata={
            "newest_charge": str(newest_charge) if newest_charge else "none",
            "as_of": str(now),
            "age_hours": dg.MetadataValue.float(round(age_hours, 2))
            if age_hours is not None
            else dg.MetadataValue.null(),
            "max_age_hours": dg.MetadataValue.float(float(max_age_hours)),
        },
    )


def build_source_load_asset(source: SourceSettings) -> dg.AssetsDefinition:
    """The raw load asset of one configured billing source (`raw/<source>`, partitioned by
    billing period), shown with its kind's Dagster kinds and description."""
    key = source_asset_key(source.name)
    source_name = source.name
    kind = kind_of(source)

    @dg.asset(
        key=key,
        partitions_def=billing_periods,
        group_name="ingest",
        owners=["team:finops"],
        kinds=set(kind.dagster_kinds),
        tags={"runledger/source_kind": source.kind},
        pool=WAREHOUSE_POOL,
        metadata=holds_tables(*RAW_LOAD_TABLES),
        description=(
            f"Billing source `{source_name}` ({source.kind}): its line items of one billing period in "
            f"`focus_line_items`; {kind.description}. The delivery (for AWS only the files its latest "
            "manifest lists) replaces the source's rows of the period in one transaction once its row count and "
            "BilledCost equal the raw export's control totals; every attempt, loaded or not, is a row of `loads`."
        ),
        check_specs=[
            dg.AssetCheckSpec(
                SCHEMA_DRIFT_CHECK,
                asset=key,
                description="The delivery has every column the reader maps and no column its format does not know.",
            ),
            dg.AssetCheckSpec(
                FRESHNESS_CHECK,
                asset=key,
                description="The source's newest charge is no older than `orchestration.freshness_max_age_hours`.",
            ),
        ],
    )
    def _source_load(
        context: dg.AssetExecutionContext, config: IngestConfig, runledger: RunLedgerResource
    ) -> dg.MaterializeResult:
        try:
            result, checks = _load(context, runledger, source_name, config.full_refresh)
        except Exception as error:
            retry = retry_request(error, context.retry_number)
            if retry is None:
                raise
            raise retry from error
        metadata: dict[str, object] = {"rows": dg.MetadataValue.int(result.rows if result else 0)}
        if result:
            metadata |= {
                "files": dg.MetadataValue.int(result.files),
                "billed_cost": dg.MetadataValue.text(str(result.billed_cost)),
                "effective_cost": dg.MetadataValue.text(str(result.effective_cost)),
                "currency": result.currency or "",
            }
        return dg.MaterializeResult(metadata=metadata, check_results=checks)

    return _source_load


def build_focus_line_items(source_keys: list[dg.AssetKey]) -> dg.AssetsDefinition:
    """`focus_line_items` for one billing period, after the raw loads of every source."""

    @dg.asset(
        key=FOCUS_LINE_ITEMS,
        deps=source_keys,
        partitions_def=billing_periods,
        group_name="ingest",
        owners=["team:finops"],
        kinds={"duckdb"},
        metadata=holds_tables(*RAW_LOAD_TABLES),
        pool=WAREHOUSE_POOL,
    )
    def focus_line_items(context: dg.AssetExecutionContext, runledger: RunLedgerResource) -> dg.MaterializeResult:
        """Billing line items on the FOCUS 1.2 model, one billing period of every billing source:
        the union of the raw loads (`raw/<source>`) and their records in `loads`. Its metadata
        shows each source's loaded totals beside the raw export's control totals, and the
        period's most expensive services."""
        billing_period = billing_period_of(context.partition_key)
        config = runledger.load_config()
        with runledger.warehouse(config) as conn:
            params = {"billing_period": billing_period}
            summary = conn.execute(read_sql("staging/focus_line_items", "period_summary"), params).fetchall()
            top = conn.execute(
                read_sql("staging/focus_line_items", "period_top_services"), params | {"limit": PREVIEW_ROWS}
            ).fetchall()
        billed = sum((row[5] for row in summary), Decimal(0))
        effective = sum((row[7] for row in summary), Decimal(0))
        return dg.MaterializeResult(
            metadata={
                "rows": dg.MetadataValue.int(sum(row[2] for row in summary)),
                "sources_loaded": dg.MetadataValue.int(len({row[0] for row in summary})),
                "billed_cost": dg.MetadataValue.text(str(billed)),
                "effective_cost": dg.MetadataValue.text(str(effective)),
                "control_totals": dg.MetadataValue.md(
                    "| source | currency | rows | derived rows | raw rows | billed | raw billed | effective "
                    "| GPU-hours |\n|---|---|---:|---:|---:|---:|---:|---:|---:|\n"
                    + "\n".join(
                        f"| {s} | {c} | {r:,} | {d:,} | {rr if rr is not None else '–'} | {_money_text(b)} | "
                        f"{_money_text(rb)} | {_money_text(e)} | {_money_text(g)} |"
                        for s, c, r, d, rr, b, rb, e, g, _ in summary
                    )
                ),
                "preview": dg.MetadataValue.md(
                    "| provider | service | category | currency | rows | effective |\n|---|---|---|---|---:|---:|\n"
                    + "\n".join(f"| {p} | {s} | {k} | {c} | {n:,} | {_money_text(e)} |" for p, s, k, c, n, e in top)
                ),
            }
        )

    return focus_line_items
