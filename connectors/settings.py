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
LEGACY_PERIOD_FOLDER = re.compile(r"^(\d{4})(\d{2})01-(\d{4})(\d{2})01$")
LEGACY_MANIFEST_SUFFIX = "-Manifest.json"
LEGACY_CSV_SUFFIXES = (".csv", ".csv.gz", ".csv.zip", ".zip")
PARQUET_STATUS_FOLDER = "cost_and_usage_data_status"
PARQUET_YEAR_FOLDER = re.compile(r"^year=(\d{4})$")
PARQUET_MONTH_FOLDER = re.compile(r"^month=(\d{1,2})$")
PARQUET_STATUS_READY = "READY"

# botocore's adaptive mode backs off exponentially on throttling and rate-limits the client.
AWS_RETRY_MODE = "adaptive"
AWS_MAX_ATTEMPTS = 10
TAGGING_PAGE_SIZE = 100
