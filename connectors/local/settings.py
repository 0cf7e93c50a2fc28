"""Constants of local export files (any FOCUS export as CSV or Parquet)."""

FOCUS_SUFFIXES = (".csv", ".csv.gz", ".parquet")
