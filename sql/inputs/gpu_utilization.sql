-- The telemetry sources' GPU-hours, replaced whole from every `prometheus` source and the MLflow
-- system metrics of every `run_events` source on MLflow (pipelines/telemetry/utilization.py).

-- name: delete
-- Empties gpu_utilization before every source's GPU-hours are inserted again.
delete from gpu_utilization;

-- name: insert
-- The GPU-hours of one source, from the Arrow table registered as staged_gpu_hours.
insert into gpu_utilization by name
with staged as (
    select * from staged_gpu_hours
),

final as (
    select
        $source_name as source_name,
        series,
        gpu,
        hour,
        samples,
        utilization_sum,
        host,
        resource_id,
        job_id,
        training_run
    from staged
)

select * from final;

-- name: summary
-- Per source: series, GPUs, hours and samples, and the mean utilization, for the asset's metadata.
with gpu_hours as (
    select * from gpu_utilization
),

final as (
    select
        source_name,
        count(distinct series) as series,
        count(distinct gpu) as gpus,
        count(distinct hour) as hours,
        sum(samples) as samples,
        decimal_divide(sum(utilization_sum), sum(samples)) as gpu_utilization
    from gpu_hours
    group by source_name
)

select * from final
order by source_name;
