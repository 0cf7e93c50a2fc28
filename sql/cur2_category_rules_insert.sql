-- The cost category rules in order, each glob as a LIKE pattern (NULL: any value).
insert into cur2_category_rules
select
    unnest(range(len($cost_categories))),
    unnest($provider),
    unnest($service),
    unnest($service_category),
    unnest($detail),
    unnest($charge_category),
    unnest($cost_categories)
