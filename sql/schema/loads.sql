-- Every load of one (source, billing period): what was read and its control totals.
create table if not exists loads (
    load_id varchar not null,
    source_name varchar not null,
    source_format varchar not null,
    billing_period date not null,
    delivery varchar,               -- manifest key, execution id or file set identity
    files varchar[],
    raw_rows bigint,
    raw_billed_cost decimal(38, 10),
    loaded_rows bigint,
    loaded_billed_cost decimal(38, 10),
    loaded_effective_cost decimal(38, 10),
    currency varchar,
    status varchar not null,        -- loaded | failed | unchanged (delivery already loaded) | not_ready
    error varchar,
    started_at timestamp not null,
    finished_at timestamp,
    snapshot_export_time timestamp, -- GCP: latest export_time among the rows loaded (UTC)
    watermark timestamp             -- GCP BigQuery: the source's export_time watermark after this load
);

-- What the table and each column hold (read into DuckDB's catalog, the Dagster column schemas and
-- docs/warehouse.md).
comment on table loads is
    'Every load attempt of one (billing source, billing period), appended and never changed: what was read, the '
    'raw export''s control totals beside what was loaded, and how it ended. The latest loaded row of a (source, '
    'period) describes the rows in focus_line_items. Money is DECIMAL(38,10); timestamps are UTC.';
comment on column loads.load_id is 'Identifier of the attempt (a UUID).';
comment on column loads.source_name is 'The billing source (x_SourceName of its rows).';
comment on column loads.source_format is
    'The export format read (as x_SourceFormat); the source kind (aws_cur, gcp_billing, focus) when the attempt '
    'failed or stopped before reading a delivery.';
comment on column loads.billing_period is 'The billing period, as the first day of its month.';
comment on column loads.delivery is
    'Identity of the delivery (the AWS manifest and execution id, the GCP snapshot, a fingerprint of the files) and '
    'of the mapping applied to it: a period whose delivery equals its latest loaded one is not read again. NULL '
    'when it could not be read.';
comment on column loads.files is 'The files read, as s3:// URIs or paths; empty when none was read.';
comment on column loads.raw_rows is 'Rows of the raw export for the period, counted before normalization.';
comment on column loads.raw_billed_cost is
    'Billed cost of the raw export for the period, summed before normalization: the control total focus_line_items '
    'must equal. NULL when the delivery was not read.';
comment on column loads.loaded_rows is 'Rows written to focus_line_items; NULL unless status is loaded.';
comment on column loads.loaded_billed_cost is 'Sum of their BilledCost; NULL unless status is loaded.';
comment on column loads.loaded_effective_cost is 'Sum of their EffectiveCost; NULL unless status is loaded.';
comment on column loads.currency is 'BillingCurrency of the rows loaded; NULL unless status is loaded.';
comment on column loads.status is
    'loaded (the period''s rows of the source were replaced), failed (nothing replaced, see error), unchanged (its '
    'delivery was loaded already) or not_ready (the export is being rewritten); unless loaded, the previous rows '
    'stay.';
comment on column loads.error is
    'Why the attempt failed, or why an unchanged or not_ready period was not read; NULL for loaded.';
comment on column loads.started_at is 'When the attempt started, UTC.';
comment on column loads.finished_at is 'When the attempt ended, UTC.';
comment on column loads.snapshot_export_time is
    'GCP: the latest export_time among the rows read, UTC; NULL for other sources.';
comment on column loads.watermark is
    'GCP BigQuery: the source''s export_time watermark after this load, UTC (the next incremental read starts a day '
    'before it); NULL for other sources.';
