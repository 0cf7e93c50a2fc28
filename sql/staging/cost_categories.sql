-- x_CostCategory of a delivery's lines: each format lists the distinct rule inputs its delivery
-- holds (`inputs` in its mapping), then `categorize` applies the rules (sql/staging/lookups.sql) to
-- each once.

-- name: categorize
-- Each input's x_CostCategory: the first matching rule (NULL pattern: any value; a missing value
-- matches as ''), else 'other'; and the ServiceCategory and ServiceSubcategory of a line whose
-- export names none: its service's (AWS service codes), else its cost category's and `Other (...)`.
insert into line_categories
with inputs as (
    select * from category_inputs
),

rules as (
    select * from category_rules
),

categorized as (
    select
        inputs.provider,
        inputs.service,
        inputs.service_category,
        inputs.detail,
        inputs.charge_category,
        coalesce(arg_min(rules.cost_category, rules.rule_order), 'other') as cost_category
    from inputs
    left join rules
        on (rules.provider is null or ilike_escape(coalesce(inputs.provider, ''), rules.provider, '\'))
        and (rules.service is null or ilike_escape(coalesce(inputs.service, ''), rules.service, '\'))
        and (
            rules.service_category is null
            or ilike_escape(coalesce(inputs.service_category, ''), rules.service_category, '\')
        )
        and (rules.detail is null or ilike_escape(coalesce(inputs.detail, ''), rules.detail, '\'))
        and (
            rules.charge_category is null
            or ilike_escape(coalesce(inputs.charge_category, ''), rules.charge_category, '\')
        )
    group by all
),

services as (
    select * from service_categories
),

subcategory_rules as (
    select * from service_subcategory_rules
),

service_categorized as (
    select
        categorized.*,
        coalesce(services.service_category, cost_category_service_category(categorized.cost_category))
            as default_service_category,
        services.service_subcategory as service_default_subcategory
    from categorized
    left join services on categorized.provider = services.provider and categorized.service = services.service
),

subcategorized as (
    select
        service_categorized.provider,
        service_categorized.service,
        service_categorized.service_category,
        service_categorized.detail,
        service_categorized.charge_category,
        service_categorized.cost_category,
        service_categorized.default_service_category,
        service_categorized.service_default_subcategory,
        arg_min(subcategory_rules.service_subcategory, subcategory_rules.rule_order) as matched_subcategory
    from service_categorized
    left join subcategory_rules
        on coalesce(service_categorized.service_category, service_categorized.default_service_category)
        = subcategory_rules.service_category
        and (
            subcategory_rules.provider is null
            or ilike_escape(coalesce(service_categorized.provider, ''), subcategory_rules.provider, '\')
        )
        and (
            subcategory_rules.service is null
            or ilike_escape(coalesce(service_categorized.service, ''), subcategory_rules.service, '\')
        )
        and (
            subcategory_rules.detail is null
            or ilike_escape(coalesce(service_categorized.detail, ''), subcategory_rules.detail, '\')
        )
    group by all
),

-- the first matching subcategory rule, else the service's own (an AWS service code's), else
-- FOCUS's catch-all of the category, `Other (<category>)`
final as (
    select
        subcategorized.* exclude (matched_subcategory, service_default_subcategory),
        coalesce(
            subcategorized.matched_subcategory,
            subcategorized.service_default_subcategory,
            'Other (' || coalesce(subcategorized.service_category, subcategorized.default_service_category) || ')'
        ) as service_subcategory
    from subcategorized
)

select * from final;
