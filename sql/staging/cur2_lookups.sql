-- The lookup tables a CUR 2.0 delivery is mapped with (this connection only), filled from
-- the repository's mapping tables and the delivery's file list.

-- name: category_rules
-- The cost category rules in order, each glob as a LIKE pattern (NULL: any value).
insert into cur2_category_rules
select
    unnest(range(len($cost_categories))),
    unnest($provider),
    unnest($service),
    unnest($service_category),
    unnest($detail),
    unnest($charge_category),
    unnest($cost_categories);

-- name: cost_category_services
-- The ServiceCategory of each cost category, for services without one of their own.
insert into cur2_cost_category_services
select unnest($cost_categories), unnest($service_categories);

-- name: gpu_instance_types
-- GPUs per AWS instance type (lower case), from the mapping table kept in the repository.
insert into cur2_gpu_instance_types
select lower(instance_type), gpus
from read_csv(
    $file,
    header = true,
    columns = {'provider': 'varchar', 'instance_type': 'varchar', 'gpus': 'integer', 'accelerator': 'varchar'}
)
where provider = 'Amazon Web Services';

-- name: service_categories
-- The FOCUS ServiceCategory of AWS service codes, from the mapping table kept in the repository.
insert into cur2_service_categories
select service_code, service_category
from read_csv($file, header = true, columns = {'service_code': 'varchar', 'service_category': 'varchar'});

-- name: delivery_files
-- The delivery's files, where the user finds each, and the delivery row number of its first row.
insert into cur2_delivery_files
select unnest($files), unnest($locations), unnest($first_rows);
