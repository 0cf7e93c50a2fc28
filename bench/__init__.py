"""`make bench`: synthetic CUR 2.0 exports at 1M-20M line items and the nightly job measured on
them, beside a bare DuckDB normalize pass and the FinOps Foundation's focus-converter."""
