-- Tag keys compare case-insensitively with '-', ' ', ':' as '_', and AWS's user_/user: prefix and
-- GKE cost allocation's k8s-label/ prefix (a pod label, `k8s_label/` once '-' is '_') ignored.
create or replace macro normalize_tag_key(tag_key) as
    regexp_replace(regexp_replace(lower(trim(tag_key)), '[-\s:]', '_', 'g'), '^(user_|k8s_label/)', '');

-- A resource id as ARNs and bare ids both reduce to it, so CUR lines and Tagging API ARNs join:
-- arn:aws:s3:::bucket → bucket; arn:…:instance/i-0abc → i-0abc; a bare id stays as it is.
create or replace macro normalize_resource_id(resource_id) as
    case
        when resource_id is null then null
        when resource_id like 'arn:%:s3:::%' then split_part(resource_id, ':::', 2)
        when resource_id like 'arn:%/%' then regexp_extract(resource_id, '/([^/]+)$', 1)
        when resource_id like 'arn:%' then regexp_extract(resource_id, ':([^:]+)$', 1)
        else resource_id
    end;

-- A row of one billing period (its first day): the same as date_trunc('month', start) = period,
-- written as a range so DuckDB skips the row groups of other periods.
create or replace macro in_billing_period(billing_period_start, billing_period) as
    billing_period_start >= billing_period and billing_period_start < billing_period + interval 1 month;

-- The first of tag_keys (in priority order) that the tags map carries with a non-blank value, as
-- {tag_key, tag_value}; NULL when none does.
create or replace macro first_tag(tags, tag_keys) as
    list_filter(
        list_transform(tag_keys, lambda tag_key: {'tag_key': tag_key, 'tag_value': nullif(trim(tags[tag_key]), '')}),
        lambda tag: tag.tag_value is not null
    )[1];

-- is_built_in_dimension(dimension): whether an attribution dimension is one of the four with a
-- column of its own (training_run, experiment, dataset_version, owner); every other configured
-- dimension is a key of custom_dimensions.
create or replace macro is_built_in_dimension(dimension) as
    dimension in ('training_run', 'experiment', 'dataset_version', 'owner');

-- custom_tags(tags, dimension_keys): per custom dimension of dimension_keys (a list of
-- {dimension, keys}), the value of the first of its keys the tags carry (first_tag), as a map of
-- dimension to value without the dimensions none of whose keys has a value.
create or replace macro custom_tags(tags, dimension_keys) as
    map_from_entries(
        list_filter(
            list_transform(
                dimension_keys,
                lambda dimension_key: {
                    'key': dimension_key.dimension, 'value': first_tag(tags, dimension_key.keys).tag_value
                }
            ),
            lambda entry: entry.value is not null
        )
    );

-- spend_kind(ChargeCategory, CommitmentDiscountStatus, CommitmentDiscountId, x_CostCategory,
-- ResourceId): the one rule of which spend tagging could move to a run, "taggable spend". 'resource'
-- for a line of a resource (it has a ResourceId, which a tag, a tag snapshot or a registry glob
-- reaches): taggable. Else why no tag can move it, first that applies: 'commitment' (the fee or
-- purchase of a Savings Plan, reservation or commitment, or its unused part), 'tax', 'credit',
-- 'support', 'purchase' (any other purchase) or 'no resource'.
create or replace macro spend_kind(
    charge_category, commitment_discount_status, commitment_discount_id, cost_category, resource_id
) as
    case
        when commitment_discount_status = 'Unused' then 'commitment'
        when charge_category = 'Purchase' and commitment_discount_id is not null then 'commitment'
        when charge_category = 'Tax' or cost_category = 'tax' then 'tax'
        when charge_category = 'Credit' then 'credit'
        when cost_category = 'support' then 'support'
        when charge_category = 'Purchase' then 'purchase'
        when resource_id is null then 'no resource'
        else 'resource'
    end;

-- units(value): money, a weight or GPU-hours as a signed HUGEINT count of 1e-10, the scale every
-- exact split counts in (a DECIMAL(38, 10) is exactly that many units).
create or replace macro units(value) as cast(cast(value as decimal(38, 10)) * 10000000000 as hugeint);

-- from_units(count): a count of 1e-10 back as DECIMAL(38, 10).
create or replace macro from_units(count) as
    cast(cast(count as decimal(38, 0)) * cast(0.0000000001 as decimal(11, 10)) as decimal(38, 10));

-- fixed_split_shares(line_rules_table, rules_table, weights_table): the integer shares of a fixed
-- split (a shared-cost or commitment rule's weights, which sum to 1), for every line a rule took:
-- the tables named hold the lines and their rule (line_row, rule_name), the rules (rule_name,
-- split) and the weights (rule_name, training_run, weight). Per line and run: its weight in units
-- (share) and the rule's total of them (total_share).
create or replace macro fixed_split_shares(line_rules_table, rules_table, weights_table) as table
with weights as (
    select
        rule_name,
        training_run,
        units(weight) as weight_units,
        sum(units(weight)) over (partition by rule_name) as rule_units
    from query_table(weights_table)
),

final as (
    select
        line_rules.line_row,
        weights.training_run,
        rules.rule_name,
        rules.split,
        weights.weight_units as share,
        weights.rule_units as total_share
    from query_table(line_rules_table) as line_rules
    inner join query_table(rules_table) as rules on line_rules.rule_name = rules.rule_name
    inner join weights on rules.rule_name = weights.rule_name
    where rules.split = 'fixed'
)

select * from final;

-- largest_remainder_split(parts_table): an amount split exactly among members in proportion to
-- their weights, by largest remainder in units of 1e-10. parts_table (a table or CTE name) holds one
-- row per (split_key, member) with the split's amount (the same on each of its rows) and the
-- member's weight (a number >= 0; a split whose weights are all 0 is split equally). Per member:
-- floor(|amount| x weight / total weight) in units, the units left over one each to the members
-- with the largest remainders (ties: by member), the sign of the amount; the parts of a split sum
-- exactly to its amount. Valid while |amount| x the total weight, both in units, stays below
-- 1.7e38 (e.g. both below 1e9).
create or replace macro largest_remainder_split(parts_table) as table
with parts as (
    select split_key, member, units(amount) as amount_units, units(weight) as weight_units
    from query_table(parts_table)
),

weighted as (
    select
        *,
        if(sum(weight_units) over split = 0, 1, weight_units) as share
    from parts
    window split as (partition by split_key)
),

floored as (
    select
        *,
        abs(amount_units) * share // sum(share) over split as part_floor,
        abs(amount_units) * share % sum(share) over split as part_remainder
    from weighted
    window split as (partition by split_key)
),

ranked as (
    select
        *,
        abs(amount_units) - sum(part_floor) over (partition by split_key) as units_left,
        row_number() over (partition by split_key order by part_remainder desc, member) as remainder_rank
    from floored
),

final as (
    select
        split_key,
        member,
        from_units(sign(amount_units) * (part_floor + if(remainder_rank <= units_left, 1, 0))) as part
    from ranked
)

select * from final;

-- decimal_divide(numerator, denominator): the quotient as DECIMAL(38, 10), rounded half away from
-- zero like DuckDB's round() and decimal casts; NULL when the denominator is 0 or NULL.
-- DuckDB divides DECIMALs in DOUBLE (about 16 significant digits), so this reads both operands as
-- integer counts of 1e-10 (n, d) and divides exactly in HUGEINT:
--     round(n * 1e10 / d) = sign(n) * sign(d) * ((2 * |n| * 1e10 + |d|) // (2 * |d|))
-- (units(1) = 1e10), then scales the result back by 1e-10 (from_units). Valid while |numerator| <
-- 8.5e17 (the quotient then fits); beyond that DuckDB raises an overflow error rather than
-- returning a wrong number.
create or replace macro decimal_divide(numerator, denominator) as (
    case
        when denominator <> 0 then from_units(
            sign(numerator) * sign(denominator) * (
                (2 * abs(units(numerator)) * units(1) + abs(units(denominator)))
                // (2 * abs(units(denominator)))
            )
        )
    end
);

-- effective_mfu(gpu_hours_at_peak, planned_tokens, tokens, gpu_hours): the MFU over every GPU-hour,
-- overhead included: the GPU-hours `tokens` take at the GPU's full peak (a budget's
-- gpu_hours_at_peak for its planned_tokens, scaled by tokens / planned_tokens) / gpu_hours. The one
-- rule of budget_variance's effective MFUs (tokens = planned_tokens) and run_progress's (the tokens
-- trained). The token fraction is DECIMAL(38, 10) (exactly 1 for the planned tokens); NULL when
-- any input is NULL or gpu_hours or planned_tokens is 0.
create or replace macro effective_mfu(gpu_hours_at_peak, planned_tokens, tokens, gpu_hours) as
    decimal_divide(
        round(gpu_hours_at_peak * decimal_divide(tokens, planned_tokens), 10),
        gpu_hours
    );

-- cost_per_1e9_tokens(cost, tokens): cost / tokens x 1e9 as DECIMAL(38, 10), exact (tokens / 1e9
-- has at most 9 decimals); NULL when tokens is 0 or NULL.
create or replace macro cost_per_1e9_tokens(cost, tokens) as
    decimal_divide(cost, cast(tokens as decimal(38, 10)) * cast(0.000000001 as decimal(10, 9)));

-- pricing_type(PricingCategory, CommitmentDiscountType): how a usage line was priced, for the unit
-- economics of run_pricing: savings_plan, reservation or committed_use (a commitment discount's
-- type), spot (PricingCategory Dynamic), on_demand (Standard), committed (Committed without a
-- type) or other.
create or replace macro pricing_type(pricing_category, commitment_discount_type) as
    case
        when commitment_discount_type = 'Savings Plan' then 'savings_plan'
        when commitment_discount_type = 'Reservation' then 'reservation'
        when commitment_discount_type = 'Committed Use Discount' then 'committed_use'
        when pricing_category = 'Dynamic' then 'spot'
        when pricing_category = 'Standard' then 'on_demand'
        when pricing_category = 'Committed' then 'committed'
        else 'other'
    end;

-- budget_status(estimated_cost, actual_cost, warning_from, over_from, reference_cost, ended): the
-- one rule of a budget's status (budget_variance, group_budget_variance). over once actual reaches
-- over_from (the over threshold x the estimate); once the budget's run or period has ended, under
-- below 90 % of the estimate, else within; while it runs, warning from warning_from or above 110 %
-- of reference_cost (what should have been spent by now), under below 90 % of it, else on_track.
-- An estimate of 0 is over with any spend.
create or replace macro budget_status(estimated_cost, actual_cost, warning_from, over_from, reference_cost, ended) as
    case
        when estimated_cost = 0 then if(actual_cost > 0, 'over', 'on_track')
        when actual_cost >= over_from then 'over'
        when ended then if(actual_cost < estimated_cost * cast(0.9 as decimal(2, 1)), 'under', 'within')
        when actual_cost >= warning_from then 'warning'
        when actual_cost > reference_cost * cast(1.1 as decimal(2, 1)) then 'warning'
        when actual_cost < reference_cost * cast(0.9 as decimal(2, 1)) then 'under'
        else 'on_track'
    end;

-- The table macros below read warehouse tables, which DuckDB resolves when a macro is created:
-- create_schema creates them after the tables.

-- run_dimensions(period, allocation_methods): per training run, its experiment, dataset_version,
-- owner and custom_dimensions (a map, one entry per custom dimension with a value): the run
-- registry's (the four), else the value carrying most of the run's effective spend (the
-- sum of |effective_cost| of its cost_allocations carrying that value; ties: the smaller value).
-- The allocations that weigh: those of one billing period (its first day) or of every period
-- (NULL), by the listed allocation methods or by any (NULL). One row per run with such
-- allocations or a registry entry.
create or replace macro run_dimensions(period, allocation_methods) as table
with allocations as (
    select training_run, experiment, dataset_version, owner, custom_dimensions, abs(effective_cost) as weight
    from cost_allocations
    where training_run is not null
        and (period is null or in_billing_period(BillingPeriodStart, cast(period as date)))
        and (allocation_methods is null or list_contains(cast(allocation_methods as varchar[]), allocation_method))
),

dimension_values as (
    select training_run, 'experiment' as dimension, experiment as value, weight from allocations
    union all
    select training_run, 'dataset_version', dataset_version, weight from allocations
    union all
    select training_run, 'owner', owner, weight from allocations
    union all
    select training_run, custom.key, custom.value, weight
    from (select training_run, unnest(map_entries(custom_dimensions)) as custom, weight from allocations) as customs
),

main_values as (
    select training_run, dimension, value
    from (
        select training_run, dimension, value, sum(weight) as weight
        from dimension_values
        where value is not null
        group by training_run, dimension, value
    ) as value_weights
    qualify row_number() over (partition by training_run, dimension order by weight desc, value) = 1
),

main_dimensions as (
    select
        training_run,
        max(value) filter (where dimension = 'experiment') as experiment,
        max(value) filter (where dimension = 'dataset_version') as dataset_version,
        max(value) filter (where dimension = 'owner') as owner,
        map_from_entries(
            coalesce(
                list({'key': dimension, 'value': value} order by dimension)
                    filter (where not is_built_in_dimension(dimension)),
                []
            )
        ) as custom_dimensions
    from main_values
    group by training_run
),

registry as (
    select training_run, experiment, dataset_version, owner
    from run_registry
),

final as (
    select
        coalesce(registry.training_run, main_dimensions.training_run) as training_run,
        coalesce(registry.experiment, main_dimensions.experiment) as experiment,
        coalesce(registry.dataset_version, main_dimensions.dataset_version) as dataset_version,
        coalesce(registry.owner, main_dimensions.owner) as owner,
        coalesce(main_dimensions.custom_dimensions, map()) as custom_dimensions
    from registry
    full outer join main_dimensions on registry.training_run = main_dimensions.training_run
)

select * from final;

-- untaggable_lines(): the line items of focus_line_items no tag can move (spend_kind other than
-- 'resource'), with their kind and CommitmentDiscountId; every other line is a resource's, taggable.
create or replace macro untaggable_lines() as table
select x_LineItemKey, CommitmentDiscountId, spend_kind
from (
    select
        x_LineItemKey,
        CommitmentDiscountId,
        spend_kind(ChargeCategory, CommitmentDiscountStatus, CommitmentDiscountId, x_CostCategory, ResourceId)
            as spend_kind
    from focus_line_items
) as line_kinds
where spend_kind <> 'resource';

-- unattributed_spend_kind(line_spend_kind, allocation_rule): the spend kind of a part with no run,
-- from its line's kind in untaggable_lines (NULL for a resource's line) and the part's
-- allocation_rule: the line's kind when no tag can move the line, else 'outside registry window'
-- for the part of a registered resource outside every window (the registry already names it: it
-- lacks no tag, and is on no tagging worklist), else 'resource', the taggable spend.
create or replace macro unattributed_spend_kind(line_spend_kind, allocation_rule) as
    coalesce(
        line_spend_kind,
        if(allocation_rule = 'outside registry window', 'outside registry window', 'resource')
    );

-- focus_totals(period): focus_line_items per source, billing period and currency: line items, the
-- rows among them RunLedger derived from a provider line (x_DerivedFrom: raw rows + derived rows =
-- line items) and the sums of BilledCost and EffectiveCost (0 where every amount is NULL). The
-- source side of every conservation check. period: the first day of one billing period (its row groups alone are
-- read), or NULL for every period.
create or replace macro focus_totals(period) as table
select
    x_SourceName as source_name,
    cast(date_trunc('month', BillingPeriodStart) as date) as billing_period,
    BillingCurrency as currency,
    count(*) as line_items,
    count(x_DerivedFrom) as derived_rows,
    coalesce(sum(BilledCost), 0) as billed_cost,
    coalesce(sum(EffectiveCost), 0) as effective_cost
from focus_line_items
where period is null or in_billing_period(BillingPeriodStart, cast(period as date))
group by all;

-- allocation_totals(period): cost_allocations per source, billing period and currency, the
-- allocated side of every conservation check: allocation rows, the line items they allocate
-- (distinct keys; DuckDB counts them only for a reader that asks) and the sums of billed_cost and
-- effective_cost. period: as in focus_totals.
create or replace macro allocation_totals(period) as table
select
    x_SourceName as source_name,
    cast(date_trunc('month', BillingPeriodStart) as date) as billing_period,
    BillingCurrency as currency,
    count(*) as allocation_rows,
    count(distinct x_LineItemKey) as line_items,
    sum(billed_cost) as billed_cost,
    sum(effective_cost) as effective_cost
from cost_allocations
where period is null or in_billing_period(BillingPeriodStart, cast(period as date))
group by all;

-- source_as_of(): each billing source's as_of: the latest ChargePeriodEnd of its usage lines
-- (ChargeCategory Usage) lasting at most a day, the newest hour with usage, never the end of a
-- month-long fee, tax, support or credit line. One row per source with usage.
create or replace macro source_as_of() as table
select x_SourceName as source_name, max(ChargePeriodEnd) as as_of
from focus_line_items
where ChargeCategory = 'Usage' and ChargePeriodEnd <= ChargePeriodStart + interval 1 day
group by x_SourceName;

-- run_state_events(): the events of run_events that say what a run is doing (start, checkpoint,
-- failure, resume, end), without its metrics events, which carry step timings only: whatever counts
-- events, takes the latest one as the run's state or reads steps and tokens reads these, so timings
-- logged at any rate (or after the end) change no run's state, wall-clock, steps or tokens.
create or replace macro run_state_events() as table
select * from run_events
where event <> 'metrics';

-- run_end_times(): when each run ended, as the waste analysis and the recommendations take it: its
-- last `end` event (NULL while a run with events has none yet: it is still running), else, for a
-- run without events, its registry window's end; end_source says which.
create or replace macro run_end_times() as table
with event_ends as (
    select training_run, max(event_time) filter (where event = 'end') as end_time
    from run_state_events()
    group by training_run
),

registry as (
    select training_run, window_end from run_registry
),

final as (
    select
        coalesce(event_ends.training_run, registry.training_run) as training_run,
        if(event_ends.training_run is not null, event_ends.end_time, registry.window_end) as end_time,
        if(event_ends.training_run is not null, 'end event', 'registry window end') as end_source
    from event_ends
    full outer join registry on event_ends.training_run = registry.training_run
)

select * from final;

-- run_as_of(): the data's "now" per training run, from its sources' source_as_of. A run's as_of
-- is the earliest as_of of the sources carrying its spend (its bill is complete only that far),
-- else (no spend, or none from a source with usage) the latest as_of of any source; NULL while no
-- source has usage. as_of_by_source: the as_of of each source carrying the run's
-- spend. One row per run with allocations, a budget or events.
create or replace macro run_as_of() as table
with source_as_of as (
    select source_name as x_SourceName, as_of from source_as_of()
),

run_sources as (
    select distinct training_run, x_SourceName
    from cost_allocations
    where training_run is not null
),

runs as (
    select training_run from run_sources
    union
    select training_run from budget_baselines
    union
    select training_run from run_state_events()
),

run_source_as_of as (
    select
        run_sources.training_run,
        min(source_as_of.as_of) as as_of,
        map(
            list(run_sources.x_SourceName order by run_sources.x_SourceName),
            list(source_as_of.as_of order by run_sources.x_SourceName)
        ) as as_of_by_source
    from run_sources
    inner join source_as_of on run_sources.x_SourceName = source_as_of.x_SourceName
    group by run_sources.training_run
),

final as (
    select
        runs.training_run,
        coalesce(run_source_as_of.as_of, (select max(as_of) from source_as_of)) as as_of,
        run_source_as_of.as_of_by_source
    from runs
    left join run_source_as_of on runs.training_run = run_source_as_of.training_run
)

select * from final;

-- allocation_day_parts(): every allocation's effective spend per UTC charge day, each allocation
-- spread over its charge period, with the allocation's dimensions (training_run, experiment,
-- dataset_version, owner, custom_dimensions, cluster), source, currency, billing period (its first
-- day), cost category and allocation method. An allocation inside one UTC day falls on that day
-- (ChargePeriodStart, else BillingPeriodStart); a longer one (a month's RI or Savings Plan fee,
-- tax, support, a credit) is spread by the seconds of each day it covers: every day but the last
-- gets round(cost x its seconds / the period's seconds, 10) (decimal_divide), the last day the
-- remainder, so the day parts of an allocation sum exactly to it. The one rule of every daily
-- series, cumulative curve and threshold crossing (run_day_parts, group_budget_days).
create or replace macro allocation_day_parts() as table
with allocations as (
    select
        x_SourceName as source_name,
        BillingCurrency as currency,
        cast(date_trunc('month', BillingPeriodStart) as date) as billing_period,
        training_run,
        experiment,
        dataset_version,
        owner,
        custom_dimensions,
        cluster,
        x_CostCategory as cost_category,
        allocation_method,
        coalesce(ChargePeriodStart, BillingPeriodStart) as charge_start,
        ChargePeriodEnd as charge_end,
        effective_cost
    from cost_allocations
),

one_day as (
    select * exclude (charge_start, charge_end), cast(charge_start as date) as charge_day
    from allocations
    where charge_end is null or charge_end <= date_trunc('day', charge_start) + interval 1 day
),

multi_day as (
    select
        row_number() over () as part_of,
        *,
        date_diff('second', charge_start, charge_end) as period_seconds
    from allocations
    where charge_end > date_trunc('day', charge_start) + interval 1 day
),

multi_day_days as (
    select
        *,
        unnest(generate_series(date_trunc('day', charge_start), charge_end - interval 1 microsecond, interval 1 day))
            as day_start
    from multi_day
),

day_shares as (
    select
        *,
        decimal_divide(
            effective_cost * date_diff(
                'second', greatest(charge_start, day_start), least(charge_end, day_start + interval 1 day)
            ),
            period_seconds
        ) as rounded_part,
        day_start = max(day_start) over (partition by part_of) as is_last_day
    from multi_day_days
),

spread as (
    select
        * exclude (
            part_of, charge_start, charge_end, period_seconds, day_start, effective_cost, rounded_part, is_last_day
        ),
        cast(day_start as date) as charge_day,
        if(is_last_day, effective_cost - (sum(rounded_part) over (partition by part_of) - rounded_part), rounded_part)
            as effective_cost
    from day_shares
),

final as (
    select * from one_day
    union all by name
    select * from spread
)

select * from final;

-- run_day_parts(): every run's effective spend per UTC charge day and cost category
-- (allocation_day_parts). first_usage_day: the run's first charge day of its own spend (allocated
-- by tag, resource tags or the registry, not by a shared rule).
create or replace macro run_day_parts() as table
with parts as (
    select * from allocation_day_parts()
    where training_run is not null
),

final as (
    select
        training_run,
        charge_day,
        cost_category,
        sum(effective_cost) as effective_cost,
        min(min(charge_day) filter (where allocation_method <> 'shared')) over (partition by training_run)
            as first_usage_day
    from parts
    group by training_run, charge_day, cost_category
)

select * from final;
-- An allocation of unused commitment a commitment rule (attribution.commitments) charged to a run:
-- sql/attribution/commitment_shares.sql names its rule `commitment <rule> (<split>)`.
create or replace macro is_commitment_charge(allocation_method, allocation_rule) as
    allocation_method = 'shared' and allocation_rule like 'commitment %';

-- cluster_node_resources(): every node of a cluster with its cloud resource and capacity, as the
-- scheduler sources give them: the node maps and the nodes a Kubernetes source saw
-- (cluster_nodes), and under `nodes: {tag: KEY}` each resource whose newest tag snapshot gives KEY
-- a value, that value its host (cluster_node_tags). One row per (source, cluster, node, resource,
-- validity); resource_id as the bill's ResourceId names it.
create or replace macro cluster_node_resources() as table
with listed as (
    select source_name, cluster, node, resource_id, valid_from, valid_to, gpus, cpus
    from cluster_nodes
),

tagged as (
    select
        node_tags.source_name,
        node_tags.cluster,
        snapshots.tags[node_tags.tag_key] as node,
        arg_max(snapshots.resource_key, snapshots.snapshot_at) as resource_id,
        cast(null as timestamp) as valid_from,
        cast(null as timestamp) as valid_to,
        cast(null as decimal(38, 10)) as gpus,
        cast(null as decimal(38, 10)) as cpus
    from cluster_node_tags as node_tags
    inner join resource_tag_snapshots as snapshots
        on nullif(trim(snapshots.tags[node_tags.tag_key]), '') is not null
    group by node_tags.source_name, node_tags.cluster, snapshots.tags[node_tags.tag_key]
),

final as (
    select * from listed
    union all
    select * from tagged
)

select * from final;

-- group_budget_days(): the spend of every group budget's scope per period, UTC charge day, cost
-- category, source and currency (allocation_day_parts): every allocation whose dimension named by
-- scope_kind (experiment, owner, dataset_version, cluster, else that key of custom_dimensions)
-- equals the scope. A monthly budget's periods are billing periods (its allocations' billing
-- period, from from_period on), period 'YYYY-MM'; a window budget's one period is the charge days
-- in [start, end), period its start date as text. period_start, period_end: the period's days,
-- [start, end). as_of: the period's "now", the earliest as_of of the sources carrying its spend
-- (source_as_of), as a run's (run_as_of).
create or replace macro group_budget_days() as table
with budgets as (
    select
        budget_file,
        any_value(scope_kind) as scope_kind,
        any_value(scope) as scope,
        any_value(period_kind) as period_kind,
        any_value("window") as budget_window,
        any_value(from_period) as from_period
    from group_budgets
    group by budget_file
),

parts as (
    select * from allocation_day_parts()
),

scope_parts as (
    select
        budgets.budget_file,
        budgets.scope_kind,
        budgets.scope,
        budgets.period_kind,
        budgets.budget_window,
        parts.billing_period,
        parts.source_name,
        parts.currency,
        parts.cost_category,
        parts.charge_day,
        parts.effective_cost
    from budgets
    inner join parts
        on budgets.scope = case budgets.scope_kind
            when 'experiment' then parts.experiment
            when 'owner' then parts.owner
            when 'dataset_version' then parts.dataset_version
            when 'cluster' then parts.cluster
            else parts.custom_dimensions[budgets.scope_kind]
        end
    where (
        budgets.period_kind = 'monthly'
        and parts.billing_period >= coalesce(budgets.from_period, parts.billing_period)
    )
    or (
            budgets.period_kind = 'window'
            and parts.charge_day >= budgets.budget_window['start']
            and parts.charge_day < budgets.budget_window['end']
        )
),

sources_as_of as (
    select * from source_as_of()
),

final as (
    select
        budget_file,
        scope_kind,
        scope,
        if(period_kind = 'monthly', strftime(billing_period, '%Y-%m'), strftime(budget_window['start'], '%Y-%m-%d'))
            as period,
        if(period_kind = 'monthly', billing_period, budget_window['start']) as period_start,
        if(period_kind = 'monthly', cast(billing_period + interval 1 month as date), budget_window['end'])
            as period_end,
        scope_parts.source_name,
        currency,
        cost_category,
        charge_day,
        effective_cost,
        min(sources_as_of.as_of) over (partition by budget_file, period) as as_of
    from scope_parts
    left join sources_as_of on scope_parts.source_name = sources_as_of.source_name
)

select * from final;
