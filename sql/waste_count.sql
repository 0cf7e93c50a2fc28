-- Rows of waste.
select count(*) from waste
