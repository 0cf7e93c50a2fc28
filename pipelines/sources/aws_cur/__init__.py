"""`aws_cur`: AWS billing exports (CUR 2.0, legacy CUR, AWS FOCUS), in S3 or a local folder.

settings.py (`AwsCurSource`), reader.py (the period's latest delivery as its manifest lists it),
cur2.py (CUR 2.0 files), legacy_cur.py (legacy CUR converted to CUR 2.0 columns), drift.py,
mapping.sql (CUR 2.0 → FOCUS), totals.sql (a delivery's raw control totals). An AWS FOCUS export
is read as any FOCUS file (`pipelines/sources/focus_files.py`).
"""

from pipelines.sources.aws_cur.settings import AwsCurSource
from pipelines.sources.kind import SourceKind, deferred

# The x_SourceFormat of each export layout the manifests name.
AWS_SOURCE_FORMATS = {
    "cur2": "aws_cur2",
    "aws_focus": "aws_focus",
    "legacy_csv": "aws_legacy_csv",
    "legacy_parquet": "aws_legacy_parquet",
}

KIND = SourceKind(
    name="aws_cur",
    settings=AwsCurSource,
    billing=True,
    dagster_kinds=frozenset({"aws", "duckdb"}),
    description="DuckDB maps its CUR 2.0 Parquet files onto FOCUS 1.2 (a legacy CUR delivery is first converted to "
    "CUR 2.0 columns with polars, an AWS FOCUS export read with polars)",
    reader=deferred("pipelines.sources.aws_cur.reader", "open_reader"),
    source_formats=tuple(AWS_SOURCE_FORMATS.values()),
    drift=deferred("pipelines.sources.aws_cur.drift", "column_drift"),
)
