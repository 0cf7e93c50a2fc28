-- x_CostCategory of each (service, usage type, charge category) of a CUR 2.0 delivery: the first
-- matching rule (NULL pattern: any value; a missing value matches as ''), else 'other'; and its
-- ServiceCategory: the service code's, else its cost category's, else 'Other'.
insert into cur2_cost_categories
with delivery as (
    select * from cur2_delivery_rows($files)
),

rule_inputs as (
    select distinct
        cur2_service_key(line_item_product_code, product_servicecode) as service_key,
        cur2_blank(line_item_usage_type) as detail,
        cur2_charge_category(
            line_item_line_item_type, line_item_product_code, reservation_reservation_a_r_n, line_item_tax_type
        ) as charge_category
    from delivery
),

rules as (
    select * from cur2_category_rules
),

categorized as (
    select
        rule_inputs.service_key,
        rule_inputs.detail,
        rule_inputs.charge_category,
        coalesce(arg_min(rules.cost_category, rules.rule_order), 'other') as cost_category
    from rule_inputs
    left join rules
        on (rules.provider is null or ilike_escape('Amazon Web Services', rules.provider, '\'))
        and (rules.service is null or ilike_escape(coalesce(rule_inputs.service_key, ''), rules.service, '\'))
        -- CUR 2.0 carries no service category: the rules see it blank
        and (rules.service_category is null or ilike_escape('', rules.service_category, '\'))
        and (rules.detail is null or ilike_escape(coalesce(rule_inputs.detail, ''), rules.detail, '\'))
        and (rules.charge_category is null or ilike_escape(rule_inputs.charge_category, rules.charge_category, '\'))
    group by all
),

service_categories as (
    select * from cur2_service_categories
),

cost_category_services as (
    select * from cur2_cost_category_services
),

final as (
    select
        categorized.*,
        coalesce(service_categories.service_category, cost_category_services.service_category, 'Other')
            as service_category
    from categorized
    left join service_categories on categorized.service_key = service_categories.service_code
    left join cost_category_services on categorized.cost_category = cost_category_services.cost_category
)

select * from final
