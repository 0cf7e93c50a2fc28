"""Constants of the AWS export layouts (CUR 2.0, the AWS FOCUS export, legacy CUR) and clients."""

import re

CUR2_PERIOD_FOLDER = re.compile(r"^billing_period=(\d{4})-(\d{2})$", re.IGNORECASE)
CUR2_MANIFEST_SUFFIX = "-Manifest.json"
CUR2_DATA_MARKER = re.compile(r"/data/(billing_period=\d{4}-\d{2}/.*)$", re.IGNORECASE)
CUR2_FORMAT_COLUMN = "bill_payer_account_name"
AWS_FOCUS_FORMAT_COLUMN = "BilledCost"

LEGACY_PERIOD_FOLDER = re.compile(r"^(\d{4})(\d{2})01-(\d{4})(\d{2})01$")
LEGACY_MANIFEST_SUFFIX = "-Manifest.json"
PARQUET_STATUS_FOLDER = "cost_and_usage_data_status"
PARQUET_YEAR_FOLDER = re.compile(r"^year=(\d{4})$")
PARQUET_MONTH_FOLDER = re.compile(r"^month=(\d{1,2})$")
PARQUET_STATUS_READY = "READY"

# botocore's adaptive mode backs off exponentially on throttling and rate-limits the client.
AWS_RETRY_MODE = "adaptive"
AWS_MAX_ATTEMPTS = 10
TAGGING_PAGE_SIZE = 100
