-- GPUs per AWS instance type (lower case), from the mapping table kept in the repository.
insert into cur2_gpu_instance_types
select lower(instance_type), gpus
from read_csv(
    $file,
    header = true,
    columns = {'provider': 'varchar', 'instance_type': 'varchar', 'gpus': 'integer', 'accelerator': 'varchar'}
)
where provider = 'Amazon Web Services'
