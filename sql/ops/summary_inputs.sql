-- The inputs digests of the summary tables run_costs and unattributed_costs (recorded in
-- step_inputs, pipelines/attribution/summaries.py).

-- name: run_costs
-- The digest of everything run_costs is computed from: the inputs digest of each period's
-- cost_allocations (step $allocations_step in step_inputs; it covers the period's loads, the run
-- registry, the tag snapshots and the attribution settings) and the number of allocation rows, the
-- run registry and the statement that builds the table ($definition). Reads no allocation.
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

registry as (
    select coalesce(md5(string_agg(cast(run_registry as varchar), '|' order by training_run)), '') as digest
    from run_registry
),

final as (
    select md5(concat_ws('#', allocations.digest, registry.digest, $definition)) as inputs_digest
    from allocations, registry
)

select * from final;

-- name: unattributed_costs
-- The digest of everything unattributed_costs is computed from: the inputs digest of each
-- period's cost_allocations (as for run_costs; the period's loads are those of its line items)
-- and the number of allocation rows, and the statement that builds the table ($definition).
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

final as (
    select md5(concat_ws('#', allocations.digest, $definition)) as inputs_digest
    from allocations
)

select * from final;
