-- Inserts a staged, normalized period (Parquet written by `stage_batch`); key-value lists become MAPs.
insert into focus_line_items by name
select * replace (
    map_from_entries(Tags) as Tags,
    map_from_entries(x_Credits) as x_Credits,
    map_from_entries(x_SystemLabels) as x_SystemLabels
)
from read_parquet($staging_file)
