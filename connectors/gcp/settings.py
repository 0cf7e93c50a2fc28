"""Constants of the GCP Cloud Billing export (BigQuery table ids, local export files)."""

import re

GCP_EXPORT_SUFFIXES = (".json", ".jsonl", ".ndjson", ".json.gz", ".jsonl.gz", ".ndjson.gz", ".parquet")
BIGQUERY_TABLE_ID = re.compile(r"^[A-Za-z0-9_.:-]+\.[A-Za-z0-9_]+\.[A-Za-z0-9_$-]+$")  # project.dataset.table
