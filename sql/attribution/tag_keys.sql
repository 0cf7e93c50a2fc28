-- Per attribution dimension, the tag keys the billing period's line items carry that name it
-- (after normalize_tag_key), in priority order (ties: the key as written); and as `gke:cluster`
-- and `gke:namespace` the keys of GKE cost allocation's cluster and namespace labels. A bill has few
-- distinct tag keys: finding them first lets sql/attribution/line_dimensions.sql look each
-- line's dimensions up in its Tags map instead of unnesting and regrouping every tag.
with line_keys as (
    select distinct unnest(map_keys(Tags)) as tag_key
    from focus_line_items
    where in_billing_period(BillingPeriodStart, $billing_period)
),

dimension_keys as (
    select dimension, normalize_tag_key(tag_key) as key_norm, priority
    from attribution_keys
),

-- GKE cost allocation's labels (names no configured dimension can have)
gke_keys as (
    select gke_labels.role as dimension, normalize_tag_key(gke_labels.tag_key) as key_norm, 0 as priority
    from (
        values ('gke:cluster', 'goog-k8s-cluster-name'), ('gke:namespace', 'k8s-namespace')
    ) as gke_labels (role, tag_key)
),

all_keys as (
    select * from dimension_keys
    union all
    select * from gke_keys
),

final as (
    select
        dimension_keys.dimension,
        list(line_keys.tag_key order by dimension_keys.priority, line_keys.tag_key) as tag_keys
    from line_keys
    inner join all_keys as dimension_keys on normalize_tag_key(line_keys.tag_key) = dimension_keys.key_norm
    group by dimension_keys.dimension
)

select * from final
