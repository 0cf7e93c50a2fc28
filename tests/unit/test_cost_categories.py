"""Cost category rules (pipelines/data/cost_categories.csv and a `cost_categories:` override):
globs matched case-insensitively, the first matching rule wins, 'other' when none does."""

from __future__ import annotations

from pathlib import Path

import duckdb
import polars as pl
import pytest

from pipelines.ingest.mappings import cost_category_expr, glob_condition, glob_like, glob_regex, read_category_rules

VALUES = [
    None,
    "",
    "BoxUsage",
    "USE1-BoxUsage:p4d.24xlarge",
    "use1-boxusage:p5.48xlarge",
    "EUC1-DataTransfer-Out-Bytes",
    "AmazonS3",
    "amazons3",
    "AmazonS3Glacier",
    "EBS:VolumeUsage.gp3",
    "Tax",
    "Nvidia H100 80GB GPU",
    "Größe",
    "a\nb",
]
PATTERNS = [
    "BoxUsage",
    "*BoxUsage*",
    "*boxusage*",
    "AmazonS3",
    "amazons3*",
    "*-Out-Bytes",
    "EBS:*",
    "*S3*Glacier",
    "Amazon?3",
    "*GPU*",
    "*Größe*",
    "a*b",
    "",
]


@pytest.mark.parametrize("pattern", PATTERNS)
def test_a_glob_matches_what_its_regex_matches(pattern: str) -> None:
    # literal globs take plain string operations; they must agree with the regex every glob had
    frame = pl.DataFrame({"value": VALUES}, schema={"value": pl.String})
    fast = frame.select(glob_condition("value", pattern)).to_series().to_list()
    regex = frame.select(pl.col("value").fill_null("").str.contains(glob_regex(pattern))).to_series().to_list()
    assert fast == regex


@pytest.mark.parametrize("pattern", PATTERNS)
def test_a_glob_as_like_pattern_matches_what_the_polars_glob_matches(pattern: str) -> None:
    # the CUR 2.0 mapping runs the rules in DuckDB (ilike_escape); the other formats in polars
    frame = pl.DataFrame({"value": VALUES}, schema={"value": pl.String})
    polars_matches = frame.select(glob_condition("value", pattern)).to_series().to_list()
    with duckdb.connect() as conn:
        sql_matches = conn.execute(
            "select ilike_escape(coalesce(value, ''), $pattern, '\\') from unnest($values) as t(value)",
            {"pattern": glob_like(pattern), "values": VALUES},
        ).fetchall()
    assert [matched for (matched,) in sql_matches] == polars_matches


def lines(*rows: tuple[str | None, str | None, str | None]) -> pl.DataFrame:
    return pl.DataFrame(
        [
            {
                "ProviderName": provider,
                "_service_key": service,
                "ServiceCategory": None,
                "_detail": detail,
                "ChargeCategory": charge,
            }
            for provider, service, detail, charge in (
                ("Amazon Web Services", service, detail, charge) for service, detail, charge in rows
            )
        ],
        schema=dict.fromkeys(
            ("ProviderName", "_service_key", "ServiceCategory", "_detail", "ChargeCategory"), pl.String
        ),
    )


def test_built_in_rules_first_match_wins_and_unknown_is_other() -> None:
    frame = lines(
        ("AmazonEC2", "USE1-BoxUsage:p5.48xlarge", "Usage"),
        ("AmazonEC2", "USE1-EBS:VolumeUsage.gp3", "Usage"),
        ("AmazonEC2", "USE1-DataTransfer-Out-Bytes", "Usage"),  # network rule comes before EC2 compute
        ("amazons3", "USE1-TimedStorage-ByteHrs", "Usage"),  # service codes match case-insensitively
        ("AmazonS3", "USE1-TimedStorage-ByteHrs", "Tax"),  # the tax rule is first
        ("AmazonCloudWatch", "CW:MetricMonitorUsage", "Usage"),
        ("SomeNewService", "Usage", "Usage"),
        (None, None, "Usage"),
    )
    categories = frame.select(cost_category_expr(read_category_rules())).to_series().to_list()
    assert categories == ["compute", "storage", "network", "storage", "tax", "monitoring", "other", "other"]


def test_override_rules_are_read_before_the_built_in_ones(tmp_path: Path) -> None:
    override = tmp_path / "categories.csv"
    override.write_text(
        "provider,service,service_category,detail,charge_category,cost_category\n"
        "Amazon Web Services,AmazonS3,,*Requests*,,data\n"
        "*,SomeNewService,,,,support\n"
    )
    frame = lines(
        ("AmazonS3", "USE1-Requests-Tier1", "Usage"),
        ("AmazonS3", "USE1-TimedStorage-ByteHrs", "Usage"),
        ("SomeNewService", "Usage", "Usage"),
    )
    categories = frame.select(cost_category_expr(read_category_rules(override))).to_series().to_list()
    assert categories == ["data", "storage", "support"]
