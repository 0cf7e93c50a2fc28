"""The demo's AWS billing: an organization with a training and a dev account, billed through a
CUR 2.0 export (Parquet, Data Exports layout)."""
