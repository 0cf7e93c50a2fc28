-- The ServiceCategory of each cost category, for services without one of their own.
insert into cur2_cost_category_services
select unnest($cost_categories), unnest($service_categories)
