-- The mapping tables a delivery is mapped with (this connection only, sql/staging/macros.sql),
-- filled from the repository's mapping tables and the delivery's file list.

-- name: category_rules
-- The cost category rules in order, each glob as a LIKE pattern (NULL: any value).
insert into category_rules
select
    unnest(range(len($cost_categories))),
    unnest($provider),
    unnest($service),
    unnest($service_category),
    unnest($detail),
    unnest($charge_category),
    unnest($cost_categories);

-- name: gpu_instance_types
-- GPUs per instance type: the configured ones (`gpu_instance_types:`) first, then the mapping table
-- kept in the repository; one row per gpu_instance_key, the configured one where both name it.
insert into gpu_instance_types
with configured as (
    select
        unnest(cast($instance_types as varchar[])) as instance_type,
        unnest(cast($gpus as integer[])) as gpus,
        0 as priority
),

built_in as (
    select instance_type, gpus, 1 as priority
    from read_csv(
        $file,
        header = true,
        columns = {
            'provider': 'varchar', 'instance_type': 'varchar', 'gpus': 'integer', 'accelerator': 'varchar',
            'source': 'varchar'
        }
    )
),

instance_types as (
    select * from configured
    union all
    select * from built_in
),

final as (
    select gpu_instance_key(instance_type) as instance_type, gpus
    from instance_types
    qualify row_number() over (partition by gpu_instance_key(instance_type) order by priority) = 1
)

select * from final;

-- name: aws_service_categories
-- The FOCUS ServiceCategory and ServiceSubcategory of AWS service codes, from the mapping table
-- kept in the repository.
insert into service_categories
select 'Amazon Web Services', service_code, service_category, service_subcategory
from read_csv(
    $file,
    header = true,
    columns = {'service_code': 'varchar', 'service_category': 'varchar', 'service_subcategory': 'varchar'}
);

-- name: service_subcategory_rules
-- The ServiceSubcategory rules in order, each glob as a LIKE pattern (NULL: any value).
insert into service_subcategory_rules
select
    unnest(range(len($service_subcategory))),
    unnest($provider),
    unnest($service),
    unnest($detail),
    unnest($service_category),
    unnest($service_subcategory);

-- name: gcp_region_names
-- Display names of GCP regions, from the mapping table kept in the repository.
insert into region_names
select 'Google Cloud', region_id, region_name
from read_csv($file, header = true, columns = {'region_id': 'varchar', 'region_name': 'varchar'});

-- name: delivery_files
-- The delivery's files, where the user finds each, and the delivery row number of its first row.
insert into delivery_files
select unnest($files), unnest($locations), unnest($first_rows);
