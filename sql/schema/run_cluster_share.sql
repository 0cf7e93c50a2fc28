-- Each run's share of each shared cluster per day.
create table if not exists run_cluster_share (
    cluster varchar not null,
    day date not null,
    currency varchar,
    training_run varchar not null,
    gpu_hours decimal(38, 10) not null,
    share decimal(38, 10),
    effective_cost decimal(38, 10) not null,
    idle_cost decimal(38, 10) not null
);

-- What the table and each column hold (read into DuckDB's catalog, the Dagster column schemas and
-- docs/warehouse.md).
comment on table run_cluster_share is
    'Each training run''s share of each shared cluster per UTC day and currency: the GPU-hours its jobs held, '
    'their share of what all jobs held, and its cost there. Rebuilt whole when the allocations changed.';
comment on column run_cluster_share.cluster is 'The cluster.';
comment on column run_cluster_share.day is 'The UTC day of the charges.';
comment on column run_cluster_share.currency is 'Currency of the costs.';
comment on column run_cluster_share.training_run is 'The training run.';
comment on column run_cluster_share.gpu_hours is 'GPU-hours the run''s jobs held on the cluster that day.';
comment on column run_cluster_share.share is
    'gpu_hours ÷ the cluster''s allocated_gpu_hours that day (cluster_utilization), 0 to 1.';
comment on column run_cluster_share.effective_cost is
    'The run''s effective cost on the cluster that day: what its jobs held, plus its share of idle capacity when '
    'attribution.idle_capacity.share is proportional.';
comment on column run_cluster_share.idle_cost is
    'The part of effective_cost that is shared idle capacity (0 unless attribution.idle_capacity.share is on).';
