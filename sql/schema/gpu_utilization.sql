-- What the telemetry sources read: each GPU's utilization samples summed by UTC hour, replaced
-- whole on every run by the `gpu_utilization` asset (`prometheus` sources: NVIDIA DCGM exporter
-- series; `run_events` sources on MLflow: their runs' system metrics). The view
-- gpu_utilization_runs joins each GPU-hour to its run; run_utilization sums them by run and hour.
create table if not exists gpu_utilization (
    source_name varchar not null,
    series varchar not null,
    gpu varchar not null,
    hour timestamp not null,                 -- UTC, start of the hour
    samples integer not null,
    utilization_sum decimal(38, 10) not null,
    host varchar,
    resource_id varchar,
    job_id varchar,
    training_run varchar
);

-- What the table and each column hold (read into DuckDB's catalog, the Dagster column schemas and
-- docs/warehouse.md).
comment on table gpu_utilization is
    'Each GPU''s utilization samples per UTC hour, as the telemetry sources read them (prometheus: NVIDIA DCGM '
    'exporter series; MLflow system metrics of run_events sources), replaced whole on every run. Telemetry never '
    'changes cost: gpu_utilization_runs joins each GPU-hour to its run, run_utilization sums them.';
comment on column gpu_utilization.source_name is 'The source the samples were read from.';
comment on column gpu_utilization.series is
    'Where the samples come from: the series as PromQL writes it, or the MLflow run and metric.';
comment on column gpu_utilization.gpu is
    'The GPU: its UUID, else its host and index (DCGM), or the MLflow run and GPU index.';
comment on column gpu_utilization.hour is 'The start of the UTC hour.';
comment on column gpu_utilization.samples is 'The samples of the GPU in the hour.';
comment on column gpu_utilization.utilization_sum is
    'The sum of the samples, each the fraction of the time the GPU was busy (DCGM_FI_PROF_GR_ENGINE_ACTIVE where '
    'the GPU has it, else DCGM_FI_DEV_GPU_UTIL / 100): utilization_sum / samples is the hour''s mean.';
comment on column gpu_utilization.host is 'The host the series names (its Hostname label); NULL where none.';
comment on column gpu_utilization.resource_id is
    'The cloud resource the series names (the `hosts:` label, or the host through the source''s node map); NULL '
    'where neither does (gpu_utilization_runs then looks the host up in the clusters'' node maps).';
comment on column gpu_utilization.job_id is
    'The job the exporter says holds the GPU: namespace/pod on Kubernetes, the Slurm job with HPC job mapping.';
comment on column gpu_utilization.training_run is 'The run, where the source names it itself (MLflow); else NULL.';

create table if not exists run_utilization (
    training_run varchar not null,
    hour timestamp not null,                 -- UTC, start of the hour
    gpus integer,
    gpu_utilization decimal(38, 10),
    data_wait_share decimal(38, 10),
    samples integer not null,
    data_wait_gpu_hours decimal(38, 10)
);

comment on table run_utilization is
    'How busy each training run''s GPUs were and how long its steps waited for data, per UTC hour: one row per '
    '(run, hour) with utilization samples or step timings. Telemetry only: it never changes a cost. Rebuilt whole '
    'every run from gpu_utilization_runs and the run events'' step timings.';
comment on column run_utilization.training_run is 'The training run.';
comment on column run_utilization.hour is 'The start of the UTC hour.';
comment on column run_utilization.gpus is
    'The distinct GPUs sampled in the hour; without samples, the GPUs of the run''s latest start or resume.';
comment on column run_utilization.gpu_utilization is
    'The mean utilization of the run''s GPUs in the hour, 0 to 1 (sum of every sample / samples); NULL without '
    'samples.';
comment on column run_utilization.data_wait_share is
    'The share of step time spent waiting for data in the hour (data wait seconds / step seconds, each event''s '
    'totals spread evenly over its window); NULL without step timings.';
comment on column run_utilization.samples is 'The utilization samples in the hour (0 where only timings exist).';
comment on column run_utilization.data_wait_gpu_hours is
    'GPU-hours spent waiting for data in the hour: gpus x the part of the hour with step timings x the '
    'data-wait share of the timings; NULL without step timings. Their sum is the input_bound cause''s and the '
    'data_loading_stall waste''s GPU-hours.';
