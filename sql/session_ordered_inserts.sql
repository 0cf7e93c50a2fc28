-- Back to DuckDB's default: rows keep the order in which they were inserted.
reset preserve_insertion_order
