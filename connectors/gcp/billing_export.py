"""The GCP Cloud Billing export in BigQuery: its columns, the invoice months touched since a
watermark, and complete month snapshots streamed to local Parquet. No Dagster imports here.

Reads bind every value as a query parameter; only the table id (validated) and column names
(taken from the table's own schema) are placed in the SQL text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from functools import cache
from pathlib import Path

import pyarrow.parquet as pq
from google.api_core import exceptions as google_exceptions
from google.cloud import bigquery

from connectors.errors import SourceError
from connectors.gcp.settings import BIGQUERY_TABLE_ID

SQL_DIR = Path(__file__).resolve().parent / "sql"

# Top-level export columns the FOCUS mapping reads; older tables lack some of them.
EXPORT_COLUMNS = (
    "billing_account_id",
    "service",
    "sku",
    "usage_start_time",
    "usage_end_time",
    "project",
    "labels",
    "system_labels",
    "location",
    "resource",
    "export_time",
    "cost",
    "currency",
    "currency_conversion_rate",
    "usage",
    "credits",
    "invoice",
    "cost_type",
    "adjustment_info",
    "cost_at_list",
    "seller_name",
    "price",
    "subscription",
)
REQUIRED_COLUMNS = ("cost", "currency", "credits", "invoice", "export_time", "usage_start_time", "usage_end_time")
PARTITION_FILTER = "and _PARTITIONTIME >= @partition_from"
PARTITION_SLACK = timedelta(days=1)


@dataclass(frozen=True)
class TouchedMonth:
    """An invoice month with rows exported after the watermark, as the table holds it now.

    Attributes:
        billing_period: first day of the invoice month.
        max_export_time: the latest export_time of the month's rows (UTC, naive).
        rows: the month's rows.
    """

    billing_period: date
    max_export_time: datetime
    rows: int


@dataclass(frozen=True)
class MonthSnapshot:
    """One invoice month read completely, saved as Parquet with the table's own types."""

    billing_period: date
    file: Path
    rows: int


def _naive_utc(moment: datetime) -> datetime:
    return moment.astimezone(UTC).replace(tzinfo=None) if moment.tzinfo else moment


def _aware_utc(moment: datetime) -> datetime:
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment


class BigQueryBillingExport:
    """One billing export table (`gcp_billing_export_v1_*` or `gcp_billing_export_resource_v1_*`).

    Args:
        table: `project.dataset.table`.
        client: a BigQuery client; its project runs the query jobs.
        bqstorage_client: a BigQuery Storage read client for fast Arrow downloads, or None to
            page results over the REST API.
    """

    def __init__(self, table: str, client: bigquery.Client, bqstorage_client: object | None = None) -> None:
        if not BIGQUERY_TABLE_ID.match(table):
            raise SourceError(f"BigQuery table {table!r} is not of the form project.dataset.table")
        self.table = table
        self.client = client
        self.bqstorage_client = bqstorage_client
        self._metadata: bigquery.Table | None = None

    @classmethod
    def connect(
        cls, table: str, *, project: str | None = None, endpoint_url: str | None = None
    ) -> BigQueryBillingExport:
        """A client for `table` with credentials from the standard google-auth chain.

        Args:
            table: `project.dataset.table`.
            project: the project that runs (and pays for) the query jobs; default the table's.
            endpoint_url: a BigQuery emulator's URL: requests then go there unauthenticated and
                results are paged over REST (emulators cannot serve the Storage Read API for
                query results).
        """
        job_project = project or table.split(".", 1)[0]
        if endpoint_url:
            from google.auth.credentials import AnonymousCredentials

            client = bigquery.Client(
                job_project, credentials=AnonymousCredentials(), client_options={"api_endpoint": endpoint_url}
            )
            return cls(table, client)
        import google.auth
        from google.cloud import bigquery_storage

        try:
            credentials, _ = google.auth.default()
        except google.auth.exceptions.DefaultCredentialsError as error:
            raise SourceError(f"BigQuery table {table}: no Google credentials found ({error})") from None
        client = bigquery.Client(job_project, credentials=credentials)
        return cls(table, client, bigquery_storage.BigQueryReadClient(credentials=credentials))

    def _table(self) -> bigquery.Table:
        if self._metadata is None:
            try:
                self._metadata = self.client.get_table(self.table)
            except google_exceptions.NotFound:
                raise SourceError(
                    f"BigQuery table {self.table} not found (check the `table` key and the dataset's location)"
                ) from None
            except google_exceptions.GoogleAPICallError as error:
                raise SourceError(f"BigQuery table {self.table}: {error.message}") from None
        return self._metadata

    def table_columns(self) -> tuple[str, ...]:
        """Every top-level column of the table, as its schema lists them."""
        return tuple(field.name for field in self._table().schema)

    def columns(self) -> tuple[str, ...]:
        """The export columns RunLedger reads that this table has, in a fixed order.

        Raises:
            SourceError: when a column the mapping cannot do without is missing.
        """
        present = {field.name for field in self._table().schema}
        missing = [name for name in REQUIRED_COLUMNS if name not in present]
        if missing:
            raise SourceError(f"BigQuery table {self.table} is not a billing export: no column {', '.join(missing)}")
        return tuple(name for name in EXPORT_COLUMNS if name in present)

    def _partition_filter(self) -> str:
        """Pruning on _PARTITIONTIME, for ingestion-time partitioned tables (as Google creates them)."""
        partitioning = self._table().time_partitioning
        return PARTITION_FILTER if partitioning is not None and partitioning.field is None else ""

    def _query(self, name: str, parameters: list, **identifiers: str) -> bigquery.table.RowIterator:
        sql = _read_sql(name).format(table=self.table, **identifiers)
        try:
            job = self.client.query(sql, job_config=bigquery.QueryJobConfig(query_parameters=parameters))
            return job.result()
        except google_exceptions.GoogleAPICallError as error:
            raise SourceError(f"BigQuery query on {self.table} failed: {error.message}") from None

    def touched_months(self, watermark: datetime | None) -> list[TouchedMonth]:
        """Invoice months with rows exported since one day before `watermark` (None: every
        month), oldest first, each with its current row count and latest export_time.

        The day of slack catches a batch whose export_time goes backwards (export jobs that
        overlap): its month's row count then differs from the loaded snapshot's. Partitions are
        pruned from one day before that: rows land in the partition of the day they were
        written, never before their export_time.
        """
        self._table()  # a missing table named as such, before any query on it
        if watermark is None:
            return self._month_counts("")
        since = _aware_utc(watermark) - PARTITION_SLACK
        partition_from = datetime.combine(since.date(), datetime.min.time(), UTC) - PARTITION_SLACK
        partition_filter = self._partition_filter()
        parameters = [bigquery.ScalarQueryParameter("watermark", "TIMESTAMP", since)]
        if partition_filter:
            parameters.append(bigquery.ScalarQueryParameter("partition_from", "TIMESTAMP", partition_from))
        touched = [
            row["invoice_month"] for row in self._query("touched_months", parameters, partition_filter=partition_filter)
        ]
        if not touched:
            return []
        first_month = min(self._checked_month(month) for month in touched)
        return [month for month in self._month_counts(first_month) if f"{month.billing_period:%Y%m}" in touched]

    def _month_counts(self, first_month: str) -> list[TouchedMonth]:
        """Rows and latest export_time of every invoice month from `first_month` (YYYYMM; "" for all)."""
        partition_filter = self._partition_filter() if first_month else ""
        parameters = [bigquery.ScalarQueryParameter("first_month", "STRING", first_month)]
        if partition_filter:
            first_day = datetime(int(first_month[:4]), int(first_month[4:]), 1, tzinfo=UTC)
            parameters.append(bigquery.ScalarQueryParameter("partition_from", "TIMESTAMP", first_day - PARTITION_SLACK))
        months = []
        for row in self._query("month_counts", parameters, partition_filter=partition_filter):
            month = self._checked_month(row["invoice_month"])
            if row["max_export_time"] is None:
                raise SourceError(f"BigQuery table {self.table}: invoice month {month} has rows without export_time")
            months.append(
                TouchedMonth(
                    date(int(month[:4]), int(month[4:]), 1), _naive_utc(row["max_export_time"]), row["row_count"]
                )
            )
        return months

    def _checked_month(self, month: str | None) -> str:
        if not month or not re.fullmatch(r"\d{4}(0[1-9]|1[0-2])", month):
            raise SourceError(f"BigQuery table {self.table}: invoice.month {month!r} is not YYYYMM")
        return month

    def download_month(self, billing_period: date, target: Path) -> MonthSnapshot:
        """Every row of one invoice month, streamed batch by batch into `target` (Parquet).

        Raises:
            SourceError: when the query fails, returns nothing, or fewer rows arrive than it
                reported.
        """
        columns = self.columns()
        partition_filter = self._partition_filter()
        parameters = [bigquery.ScalarQueryParameter("invoice_month", "STRING", f"{billing_period:%Y%m}")]
        if partition_filter:
            first_day = datetime.combine(billing_period, datetime.min.time(), UTC)
            parameters.append(bigquery.ScalarQueryParameter("partition_from", "TIMESTAMP", first_day - PARTITION_SLACK))
        rows = self._query("month_snapshot", parameters, columns=", ".join(columns), partition_filter=partition_filter)
        written = self._write_parquet(rows, target)
        if written == 0:
            raise SourceError(f"BigQuery table {self.table} has no rows for invoice month {billing_period:%Y%m}")
        if rows.total_rows is not None and written != rows.total_rows:
            raise SourceError(
                f"BigQuery table {self.table}, invoice month {billing_period:%Y%m}: received {written} of "
                f"{rows.total_rows} rows; nothing was loaded"
            )
        return MonthSnapshot(billing_period, target, written)

    def _write_parquet(self, rows: bigquery.table.RowIterator, target: Path) -> int:
        """Streams the result's Arrow batches into `target`: through the Storage Read API when
        there is a storage client, over REST pages when there is none or it is refused before
        the first batch (e.g. no Read Session User role)."""
        target.parent.mkdir(parents=True, exist_ok=True)
        try:
            return self._stream(rows, target, self.bqstorage_client)
        except _RefusedBeforeFirstBatch:
            return self._stream(rows, target, None)

    def _stream(self, rows: bigquery.table.RowIterator, target: Path, storage: object | None) -> int:
        written = 0
        writer = None
        try:
            for batch in rows.to_arrow_iterable(bqstorage_client=storage):
                if writer is None:
                    writer = pq.ParquetWriter(target, batch.schema)
                writer.write_batch(batch)
                written += batch.num_rows
        except google_exceptions.GoogleAPICallError as error:
            if storage is not None and writer is None:
                raise _RefusedBeforeFirstBatch from error
            raise SourceError(f"BigQuery table {self.table}: reading results failed: {error.message}") from None
        finally:
            if writer is not None:
                writer.close()
        return written


class _RefusedBeforeFirstBatch(Exception):
    """The Storage Read API refused the read before any row arrived."""


@cache
def _read_sql(name: str) -> str:
    """The BigQuery-dialect text of `connectors/gcp/sql/<name>.sql`: table names are identifiers
    (formatted in, after validation), every value is a query parameter."""
    return (SQL_DIR / f"{name}.sql").read_text()
