"""Cost category rules (pipelines/data/cost_categories.csv and a `cost_categories:` override):
globs matched case-insensitively, the first matching rule wins, 'other' when none does. The rules
run in SQL for every export format (sql/staging/cost_categories.sql)."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipelines.sources.delivery import memory_connection
from pipelines.sources.mappings import CategoryRule, fill_mapping_tables, glob_like, read_category_rules
from pipelines.warehouse.sql import read_sql

Inputs = tuple[str | None, str | None, str | None, str | None, str | None]


def categorize(rules: list[CategoryRule], inputs: list[Inputs]) -> list[str]:
    """x_CostCategory of each (provider, service, service category, detail, charge category)."""
    with memory_connection() as conn:
        conn.execute(read_sql("staging/macros"))
        fill_mapping_tables(conn, rules)
        conn.executemany("insert into category_inputs values (?, ?, ?, ?, ?)", list(dict.fromkeys(inputs)))
        conn.execute(read_sql("staging/cost_categories", "categorize"))
        found = conn.execute(
            "select provider, service, service_category, detail, charge_category, cost_category from line_categories"
        ).fetchall()
    by_inputs = {row[:5]: row[5] for row in found}
    return [by_inputs[entry] for entry in inputs]


def detail_rule(pattern: str) -> CategoryRule:
    """A rule matching only its `detail` glob."""
    patterns = dict.fromkeys(("provider", "service", "service_category", "charge_category"), "*")
    return CategoryRule({**patterns, "detail": pattern}, "compute")


GLOBS = [
    # case-insensitive, anchored at both ends
    ("BoxUsage", "BoxUsage", True),
    ("BoxUsage", "boxusage", True),
    ("BoxUsage", "USE1-BoxUsage", False),
    ("*BoxUsage*", "USE1-BOXUSAGE:p4d.24xlarge", True),
    ("*-Out-Bytes", "EUC1-DataTransfer-Out-Bytes", True),
    ("*-Out-Bytes", "EUC1-DataTransfer-Out-Bytes-2", False),
    ("EBS:*", "EBS:VolumeUsage.gp3", True),
    ("*S3*Glacier", "AmazonS3Glacier", True),
    ("*S3*Glacier", "AmazonS3GlacierDeepArchive", False),
    # `?` is exactly one character, `*` any text, the empty text too
    ("Amazon?3", "AmazonS3", True),
    ("Amazon?3", "Amazon3", False),
    ("Amazon?3", "AmazonSS3", False),
    ("Amazon*3", "Amazon3", True),
    # LIKE's own wildcards and escape character are plain characters in a glob
    ("50%_off", "50%_off", True),
    ("50%_off", "50X_off", False),
    ("50%_off", "50%Xoff", False),
    ("a\\b", "a\\b", True),
    ("a\\b", "ab", False),
    # a missing value matches as the empty text
    ("*BoxUsage*", None, False),
    ("", None, True),
    ("?", None, False),
    # non-ASCII letters compare case-insensitively too; ß is not SS
    ("*Größe*", "Eine GRÖßE", True),
    ("*Größe*", "Eine GRÖSSE", False),
    ("Élan", "élan", True),
    # `*` and `?` match line breaks
    ("a*b", "a\nb", True),
    ("a?b", "a\nb", True),
    ("a*b", "a\nc", False),
]


@pytest.mark.parametrize(("pattern", "value", "matches"), GLOBS)
def test_a_glob_matches_case_insensitively_with_star_and_question_mark(
    pattern: str, value: str | None, matches: bool
) -> None:
    inputs: Inputs = ("Amazon Web Services", "AmazonEC2", None, value, "Usage")
    assert categorize([detail_rule(pattern)], [inputs]) == ["compute" if matches else "other"]


def test_a_star_is_no_pattern_and_matches_anything() -> None:
    assert glob_like("*") is None
    assert categorize([detail_rule("*")], [(None, None, None, None, None)]) == ["compute"]


def aws(service: str | None, detail: str | None, charge: str) -> Inputs:
    return ("Amazon Web Services", service, None, detail, charge)


def test_built_in_rules_first_match_wins_and_unknown_is_other() -> None:
    inputs = [
        aws("AmazonEC2", "USE1-BoxUsage:p5.48xlarge", "Usage"),
        aws("AmazonEC2", "USE1-EBS:VolumeUsage.gp3", "Usage"),
        aws("AmazonEC2", "USE1-DataTransfer-Out-Bytes", "Usage"),  # network rule comes before EC2 compute
        aws("amazons3", "USE1-TimedStorage-ByteHrs", "Usage"),  # service codes match case-insensitively
        aws("AmazonS3", "USE1-TimedStorage-ByteHrs", "Tax"),  # the tax rule is first
        aws("AmazonCloudWatch", "CW:MetricMonitorUsage", "Usage"),
        aws("SomeNewService", "Usage", "Usage"),
        aws(None, None, "Usage"),
        ("Google Cloud", "Compute Engine", None, "Nvidia H100 80GB GPU running in Americas", "Usage"),
        ("Microsoft", "Storage Accounts", "Storage", "Tables - LRS Data Stored", "Usage"),  # by its service category
    ]
    assert categorize(read_category_rules(), inputs) == [
        "compute",
        "storage",
        "network",
        "storage",
        "tax",
        "monitoring",
        "other",
        "other",
        "compute",
        "storage",
    ]


def test_override_rules_are_read_before_the_built_in_ones(tmp_path: Path) -> None:
    override = tmp_path / "categories.csv"
    override.write_text(
        "provider,service,service_category,detail,charge_category,cost_category\n"
        "Amazon Web Services,AmazonS3,,*Requests*,,data\n"
        "*,SomeNewService,,,,support\n"
    )
    inputs = [
        aws("AmazonS3", "USE1-Requests-Tier1", "Usage"),
        aws("AmazonS3", "USE1-TimedStorage-ByteHrs", "Usage"),
        aws("SomeNewService", "Usage", "Usage"),
    ]
    assert categorize(read_category_rules(override), inputs) == ["data", "storage", "support"]


def test_an_override_rule_may_give_a_non_cloud_category(tmp_path: Path) -> None:
    override = tmp_path / "categories.csv"
    override.write_text(
        "provider,service,service_category,detail,charge_category,cost_category\n"
        "Amazon Web Services,AWSMarketplace,,*,,tooling\n"
    )
    inputs = [aws("AWSMarketplace", "SoftwareUsage", "Usage"), aws("AmazonS3", "USE1-TimedStorage-ByteHrs", "Usage")]
    assert categorize(read_category_rules(override), inputs) == ["tooling", "storage"]
