-- Every load of one (source, billing period): what was read and its control totals.
create table if not exists loads (
    load_id varchar primary key,
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
