-- The delivery's files, where the user finds each, and the delivery row number of its first row.
insert into cur2_delivery_files
select unnest($files), unnest($locations), unnest($first_rows)
