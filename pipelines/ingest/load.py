"""Atomic replacement of one (source, billing period) in `focus_line_items`, recorded in `loads`.

A delivery is mapped onto FOCUS by DuckDB straight from its files as it is inserted, in one
transaction with the delete of the period's previous rows and the `loads` row, and its loaded
totals are checked there. If anything fails — unreadable input, rows of another period, loaded
totals that differ from the raw control totals — the transaction rolls back, the previous data of
the period stays, and a `failed` load is recorded.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import UTC, date, datetime
from decimal import Decimal

import duckdb

from pipelines.sources.base import PeriodBatch, remove_files
from pipelines.warehouse.connection import committed_snapshot, describe_commit, transactions, unordered_inserts
from pipelines.warehouse.conservation import ConservationError
from pipelines.warehouse.decimal_text import AMOUNT_LIMIT
from pipelines.warehouse.sql import dict_rows, read_sql


class LoadError(RuntimeError):
    """A period could not be loaded; the message names the source, period and file."""


@dataclass(frozen=True)
class LoadResult:
    source_name: str
    billing_period: date
    rows: int
    billed_cost: Decimal
    effective_cost: Decimal
    currency: str | None
    files: int


def _utc_now() -> datetime:
    return datetime.now(UTC).replace(tzinfo=None)


LOAD_COLUMNS = (
    "delivery",
    "files",
    "raw_rows",
    "raw_billed_cost",
    "loaded_rows",
    "loaded_billed_cost",
    "loaded_effective_cost",
    "currency",
    "error",
    "snapshot_export_time",
    "watermark",
)


def _record_load(
    conn: duckdb.DuckDBPyConnection, source_name: str, source_format: str, billing_period: date, **values: object
) -> None:
    """Inserts a `loads` row; columns not given are NULL (`load_id` a new UUID)."""
    conn.execute(
        read_sql("ops/loads", "insert"),
        {
            **dict.fromkeys(LOAD_COLUMNS),
            "load_id": str(uuid.uuid4()),
            "source_name": source_name,
            "source_format": source_format,
            "billing_period": billing_period,
            **values,
        },
    )


def _batch_facts(batch: PeriodBatch) -> dict[str, object]:
    return {
        "source_name": batch.source_name,
        "source_format": batch.source_format,
        "billing_period": batch.billing_period,
        "delivery": batch.delivery,
        "files": list(batch.files),
        "raw_rows": batch.raw_rows,
        "raw_billed_cost": batch.raw_billed_cost,
        "snapshot_export_time": batch.snapshot_export_time,
    }


def record_read_failure(
    conn: duckdb.DuckDBPyConnection, source_name: str, source_format: str, billing_period: date, error: Exception
) -> None:
    """Records a load that failed before any row was read (bad manifest, missing file)."""
    now = _utc_now()
    _record_load(
        conn,
        source_name,
        source_format,
        billing_period,
        files=[],
        status="failed",
        error=str(error)[:2000],
        started_at=now,
        finished_at=now,
    )


def loaded_delivery(conn: duckdb.DuckDBPyConnection, source_name: str, billing_period: date) -> str | None:
    """The delivery of the period's latest good load, if its rows are still all there."""
    row = conn.execute(
        read_sql("ops/loads", "loaded_delivery"), {"source_name": source_name, "billing_period": billing_period}
    ).fetchone()
    return row[0] if row else None


def record_skipped_load(
    conn: duckdb.DuckDBPyConnection,
    source_name: str,
    source_format: str,
    billing_period: date,
    *,
    delivery: str | None,
    status: str,
    reason: str,
) -> None:
    """Records a period that was not reloaded: `unchanged` (same delivery as the rows loaded) or
    `not_ready` (the export is being rewritten); the period's rows stay as they are."""
    now = _utc_now()
    _record_load(
        conn,
        source_name,
        source_format,
        billing_period,
        delivery=delivery,
        files=[],
        status=status,
        error=reason,
        started_at=now,
        finished_at=now,
    )


def _where(batch: PeriodBatch) -> str:
    return f"source {batch.source_name}, billing period {batch.billing_period:%Y-%m}"


def _check_contents(
    batch: PeriodBatch, *, rows: int, rows_outside_period: int, file_outside_period: str | None, currencies: list[str]
) -> None:
    """Raises LoadError for an empty delivery, rows of another period, or several currencies."""
    if rows == 0 and not batch.raw_rows:
        raise LoadError(
            f"{_where(batch)}: the delivery holds no line items ({', '.join(batch.files)}); the rows loaded before are "
            "kept. An export being written or a truncated copy looks like this: check the files, then run again"
        )
    if rows_outside_period:
        raise LoadError(
            f"{_where(batch)}: {rows_outside_period} rows belong to another billing period "
            f"(first in {file_outside_period}); a delivery must hold only its own period"
        )
    if len(currencies) > 1:
        raise LoadError(
            f"{_where(batch)}: rows in several currencies ({','.join(currencies)}); "
            "one currency per period is supported"
        )


def _check_conservation(batch: PeriodBatch, checked: dict) -> None:
    """Raises ConservationError unless the normalized rows (less the rows derived from them) and
    BilledCost equal the raw export's."""
    raw_billed = batch.raw_billed_cost or Decimal(0)
    normalized = checked["rows"] - checked["derived_rows"]
    if normalized != batch.raw_rows or checked["billed_cost"] != raw_billed:
        raise ConservationError(
            f"{_where(batch)}: normalized rows {normalized} (besides {checked['derived_rows']} derived rows) / "
            f"BilledCost {checked['billed_cost']} differ from the raw export's {batch.raw_rows} rows / {raw_billed}; "
            "nothing was replaced"
        )


def _fetch_dict(conn: duckdb.DuckDBPyConnection, sql: str, params: dict) -> dict:
    (row,) = dict_rows(conn.execute(sql, params))
    return row


def _check_amounts(conn: duckdb.DuckDBPyConnection, batch: PeriodBatch) -> None:
    """Raises LoadError naming the first line just inserted with an amount beyond `AMOUNT_LIMIT`
    (the readers name the row of a raw amount beyond it; this holds for what a mapping derives,
    and for the CUR Parquet amounts, which are not checked row by row when their totals add up)."""
    large = conn.execute(
        read_sql("staging/focus_line_items", "first_large_amount"),
        {"source_name": batch.source_name, "billing_period": batch.billing_period, "limit": AMOUNT_LIMIT},
    ).fetchone()
    if large is not None:
        location, line_item, column, amount = large
        raise LoadError(
            f"{location or _where(batch)}, line item {line_item}, column {column}: {amount} is not below 10^15, the "
            "largest amount RunLedger loads (docs/semantics.md#amounts); fix or re-export the file, nothing was "
            "loaded"
        )


def _check_loaded(conn: duckdb.DuckDBPyConnection, batch: PeriodBatch) -> dict:
    """The totals of the rows just inserted for the batch's source and period, checked against
    the raw control totals (inside the load's transaction, which a failure rolls back)."""
    _check_amounts(conn, batch)
    checked = _fetch_dict(
        conn,
        read_sql("staging/focus_line_items", "source_period_totals"),
        {"source_name": batch.source_name, "billing_period": batch.billing_period},
    )
    _check_conservation(batch, checked)
    return checked


def _write_period(
    conn: duckdb.DuckDBPyConnection,
    batch: PeriodBatch,
    load_id: str,
    started_at: datetime,
) -> dict:
    """The period's replacement and its `loads` row, inside the caller's transaction: the
    delivery's rows, mapped now, in place of the previous ones. Returns the loaded totals, checked
    against the raw ones."""
    describe_commit(conn, f"load {batch.source_name} {batch.billing_period:%Y-%m}", load_id=load_id)
    params = {"source_name": batch.source_name, "billing_period": batch.billing_period}
    conn.execute(read_sql("staging/focus_line_items", "delete_period"), params)
    mapped = batch.mapped
    conn.execute(mapped.mapping.statement("insert"), mapped.statement_params())
    checked = _check_loaded(conn, batch)
    _record_load(
        conn,
        **_batch_facts(batch),
        load_id=load_id,
        loaded_rows=checked["rows"],
        loaded_billed_cost=checked["billed_cost"],
        loaded_effective_cost=checked["effective_cost"],
        currency=checked["currency_list"],
        watermark=batch.watermark,
        status="loaded",
        started_at=started_at,
        finished_at=_utc_now(),
    )
    return checked


def _record_snapshot(conn: duckdb.DuckDBPyConnection, load_id: str) -> None:
    """Appends to `load_snapshots` the lake snapshot the load just committed (a lake numbers a
    snapshot only once it is committed, hence after it; appending never conflicts with another
    process's writes)."""
    snapshot = committed_snapshot(conn)
    if snapshot is not None:
        conn.execute(
            read_sql("ops/loads", "record_snapshot"),
            {"load_id": load_id, "snapshot_id": snapshot, "committed_at": _utc_now()},
        )


def replace_period(conn: duckdb.DuckDBPyConnection, batch: PeriodBatch) -> LoadResult:
    """Loads one period's snapshot in place of the previous one, atomically.

    Args:
        conn: a writable warehouse connection.
        batch: the period's delivery and raw control totals (its temporary files are removed
            afterwards).

    Raises:
        LoadError, ConservationError, or the reader's SourceError: after recording a failed load.
    """
    started_at = _utc_now()
    try:
        mapped = batch.mapped
        _check_contents(
            batch,
            rows=batch.raw_rows,
            rows_outside_period=mapped.rows_outside_period,
            file_outside_period=mapped.file_outside_period,
            currencies=list(mapped.currencies),
        )
        mapped.prepare(conn)
        load_id = str(uuid.uuid4())
        with unordered_inserts(conn):
            for attempt in transactions(conn):
                with attempt:
                    checked = _write_period(conn, batch, load_id, started_at)
    except Exception as error:
        _record_load(
            conn,
            **_batch_facts(batch),
            status="failed",
            error=str(error)[:2000],
            started_at=started_at,
            finished_at=_utc_now(),
        )
        raise
    finally:
        remove_files(batch.temporary_files)
    _record_snapshot(conn, load_id)
    return LoadResult(
        source_name=batch.source_name,
        billing_period=batch.billing_period,
        rows=checked["rows"],
        billed_cost=checked["billed_cost"],
        effective_cost=checked["effective_cost"],
        currency=checked["currency_list"],
        files=len(batch.files),
    )
