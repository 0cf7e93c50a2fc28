-- Inserts a CUR 2.0 delivery's rows, mapped onto FOCUS by `cur2_focus_rows`.
insert into focus_line_items by name
select * from cur2_focus_rows($files, $source_name, $period_label, $execution_id, $source_format, $ingested_at)
