-- The resources of the loaded data (line items and AWS tag snapshots) each registry glob matches,
-- matched as attribution step 3 matches ResourceId (`runledger check` reports two runs whose
-- globs claim one of them at a common time).
with patterns as (
    select unnest($patterns) as pattern
),

resources as (
    select distinct ResourceId as resource_id
    from focus_line_items
    where ResourceId is not null
    union
    select distinct resource_key as resource_id
    from resource_tag_snapshots
),

final as (
    select
        patterns.pattern,
        list(resources.resource_id order by resources.resource_id) as resource_ids
    from patterns
    inner join resources on resources.resource_id glob patterns.pattern
    group by patterns.pattern
)

select * from final
order by pattern;
