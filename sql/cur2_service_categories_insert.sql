-- The FOCUS ServiceCategory of AWS service codes, from the mapping table kept in the repository.
insert into cur2_service_categories
select service_code, service_category
from read_csv($file, header = true, columns = {'service_code': 'varchar', 'service_category': 'varchar'})
