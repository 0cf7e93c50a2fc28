"""The export formats: how each format's files are read (polars types the text formats), and the
DuckDB mapping of each onto FOCUS (`sql/staging/<format>_normalize.sql`)."""
