-- Rows the yardstick pass wrote.
select count(*) as rows from focus_line_items
