-- The inputs digest of the waste table (recorded in step_inputs).

-- name: digest
-- The digest of everything `waste` is computed from: the inputs digest of each period's
-- cost_allocations (step $allocations_step in step_inputs; it covers the period's loads, the run
-- registry, the tag snapshots and the attribution settings) and the number of allocation rows,
-- the run state events (macro run_state_events), the budget baselines, the run registry,
-- run_utilization and the waste settings ($settings, as text). Reads no line item.
with allocations as (
    select
        coalesce(
            string_agg(partition_key || '=' || inputs_digest || '@' || recorded_at, ',' order by partition_key),
            ''
        )
            || ':' || (select count(*) from cost_allocations) as digest
    from step_inputs
    where step = $allocations_step
),

events as (
    select coalesce(md5(string_agg(event_text, '|' order by event_text)), '') as digest
    from (select cast(events as varchar) as event_text from run_state_events() as events) as event_texts
),

baselines as (
    select coalesce(md5(string_agg(cast(budget_baselines as varchar), '|' order by training_run, cost_category)), '')
        as digest
    from budget_baselines
),

registry as (
    select coalesce(md5(string_agg(cast(run_registry as varchar), '|' order by training_run)), '') as digest
    from run_registry
),

utilization as (
    select coalesce(md5(string_agg(cast(run_utilization as varchar), '|' order by training_run, hour)), '') as digest
    from run_utilization
),

final as (
    select
        md5(
            concat_ws(
                '#', allocations.digest, events.digest, baselines.digest, registry.digest, utilization.digest, $settings
            )
        ) as inputs_digest
    from allocations, events, baselines, registry, utilization
)

select * from final;
