-- Inserts a staged, normalized period (Parquet written by polars); Tags become a MAP.
insert into focus_line_items by name
select * replace (map_from_entries(Tags) as Tags)
from read_parquet($staging_file)
