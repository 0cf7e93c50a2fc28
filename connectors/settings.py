"""Constants of the export layouts the connectors read (see ../shared/BILLING.md)."""

import re

CUR2_PERIOD_FOLDER = re.compile(r"^billing_period=(\d{4})-(\d{2})$", re.IGNORECASE)
CUR2_MANIFEST_SUFFIX = "-Manifest.json"
CUR2_DATA_MARKER = re.compile(r"/data/(billing_period=\d{4}-\d{2}/.*)$", re.IGNORECASE)
CUR2_FORMAT_COLUMN = "bill_payer_account_name"
AWS_FOCUS_FORMAT_COLUMN = "BilledCost"

GCP_EXPORT_SUFFIXES = (".json", ".jsonl", ".ndjson", ".json.gz", ".jsonl.gz", ".ndjson.gz", ".parquet")
FOCUS_SUFFIXES = (".csv", ".csv.gz", ".parquet")

BIGQUERY_TABLE_ID = re.compile(r"^[A-Za-z0-9_.:-]+\.[A-Za-z0-9_]+\.[A-Za-z0-9_$-]+$")  # project.dataset.table
