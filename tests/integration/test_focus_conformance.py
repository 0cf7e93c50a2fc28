"""FOCUS 1.2 conformance as the FinOps Foundation's validator checks it: the demo warehouse
exported with `runledger export focus`, one Parquet file per source and billing period, each run
through focus-validator 2.2.1 with every rule the data's features make applicable
(tests/support/focus_validator.py); no failure but the validator's own faults
(tests/focus_validator_allowlist.yaml). The sources: AWS CUR 2.0 (aws-main), the GCP billing
export (gcp-main) and FOCUS pass-through data (focus-aws: aws-main's export loaded back as a
`focus` source, then exported again)."""

import re
from decimal import Decimal
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from pipelines.cli import main
from pipelines.nightly import run_nightly
from tests.support import write_config
from tests.support.demo_lake import SharedDemo
from tests.support.focus_validator import (
    ALLOWLIST,
    Allowlist,
    applicability_criteria,
    explain,
    rule_definitions,
    validate,
)
from tests.support.lake import lake_of, reading

PERIODS = ("2026-10", "2026-11")
SOURCES = ("aws-main", "gcp-main", "focus-aws")
PASS_THROUGH = "focus-aws"


def export(config: Path, period: str, out: Path, *options: str) -> None:
    result = CliRunner().invoke(
        main, ["export", "focus", "--config", str(config), "--period", period, "--out", str(out), *options]
    )
    assert result.exit_code == 0, result.output


@pytest.fixture(scope="module")
def exported(shared_demo: SharedDemo, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    """The demo after its night; a project whose one source, `focus`, is aws-main's own export;
    and the folder of every source's export from both (`<source>-<period>.parquet`)."""
    root = tmp_path_factory.mktemp("conformance")
    demo = shared_demo.config  # read in place
    aws_export = root / "aws-export"
    for period in PERIODS:
        export(demo, period, aws_export, "--source", "aws-main")
    (root / "pass-through").mkdir()
    pass_through = write_config(
        root / "pass-through", f"sources:\n  - {{name: {PASS_THROUGH}, kind: focus, path: {aws_export}}}\n"
    )
    run_nightly(pass_through, echo=lambda line: None)
    out = root / "export"
    for period in PERIODS:
        export(demo, period, out)
        export(pass_through, period, out)
    return demo, pass_through, out


def test_every_source_and_period_is_exported(exported: tuple[Path, Path, Path]) -> None:
    *_, out = exported
    assert sorted(path.name for path in out.iterdir()) == sorted(
        f"{source}-{period}.parquet" for source in SOURCES for period in PERIODS
    )


def test_the_pass_through_source_keeps_the_aws_totals(exported: tuple[Path, Path, Path]) -> None:
    demo, pass_through, _ = exported
    query = (
        "select strftime(BillingPeriodStart, '%Y-%m'), count(*), sum(BilledCost), sum(EffectiveCost), "
        "list(to_json(Tags) order by to_json(Tags)) from focus_line_items where x_SourceName = $source group by all"
    )
    with reading(lake_of(demo)) as conn:
        aws = conn.execute(query, {"source": "aws-main"}).fetchall()
    with reading(lake_of(pass_through)) as conn:
        loaded_again = conn.execute(query, {"source": PASS_THROUGH}).fetchall()
    assert sorted(loaded_again) == sorted(aws) and len(aws) == len(PERIODS)


@pytest.mark.parametrize("period", PERIODS)
@pytest.mark.parametrize("source", SOURCES)
def test_the_validator_finds_no_fault_outside_the_allowlist(
    exported: tuple[Path, Path, Path], source: str, period: str, tmp_path: Path
) -> None:
    *_, out = exported
    file = out / f"{source}-{period}.parquet"
    criteria = applicability_criteria(file)
    report = validate(file, criteria, tmp_path)
    unexcused = Allowlist.load().unexcused(report)
    assert report.total > 0 and report.passed > 0
    assert not unexcused, explain(report, unexcused)


def test_commitment_purchases_carry_no_effective_cost(exported: tuple[Path, Path, Path]) -> None:
    """EffectiveCost-C-005-C as the spec means it (the validator checks every Purchase): a
    commitment purchase has EffectiveCost 0, its unused part is a Usage row of its own, and the
    amortized total of each source and period is what it was before the rows were split."""
    demo, *_ = exported
    with reading(lake_of(demo)) as conn:
        purchases = conn.execute(
            "select x_SourceName, count(*), sum(EffectiveCost) from focus_line_items "
            "where ChargeCategory = 'Purchase' and CommitmentDiscountId is not null group by all order by all"
        ).fetchall()
        unused = conn.execute(
            "select strftime(BillingPeriodStart, '%Y-%m'), count(*), sum(EffectiveCost), sum(BilledCost) "
            "from focus_line_items where x_SourceName = 'aws-main' and CommitmentDiscountStatus = 'Unused' "
            "and ChargeCategory = 'Usage' group by all order by all"
        ).fetchall()
        totals = conn.execute(
            "select x_SourceName, strftime(BillingPeriodStart, '%Y-%m'), sum(BilledCost), sum(EffectiveCost) "
            "from focus_line_items group by all order by all"
        ).fetchall()
    assert [(source, effective) for source, _, effective in purchases] == [("aws-main", 0)]
    assert [(period, rows, billed) for period, rows, _, billed in unused] == [("2026-10", 55, 0), ("2026-11", 1, 0)]
    assert totals == [
        ("aws-main", "2026-10", Decimal("181963.2171339073"), Decimal("201307.2171339073")),
        ("aws-main", "2026-11", Decimal("39579.4470746182"), Decimal("58299.4470746182")),
        ("gcp-main", "2026-10", Decimal("33334.496618"), Decimal("33334.496618")),
        ("gcp-main", "2026-11", Decimal("13961.739382"), Decimal("13961.739382")),
    ]


def test_the_data_shows_the_features_the_sources_have(exported: tuple[Path, Path, Path]) -> None:
    *_, out = exported
    aws = set(applicability_criteria(out / "aws-main-2026-10.parquet"))
    gcp = set(applicability_criteria(out / "gcp-main-2026-10.parquet"))
    both = {"REGION_SUPPORTED", "AVAILABILITY_ZONE_SUPPORTED", "SUB_ACCOUNT_SUPPORTED", "TAGGING_SUPPORTED"}
    assert both | {"COMMITMENT_DISCOUNT_SUPPORTED", "MULTIPLE_PRICING_CATEGORIES_SUPPORTED"} <= aws
    assert both <= gcp
    assert "VIRTUAL_CURRENCY_SUPPORTED" not in aws | gcp
    assert set(applicability_criteria(out / f"{PASS_THROUGH}-2026-10.parquet")) == aws


def test_the_allowlist_names_the_validators_rules_and_quotes_them() -> None:
    document = yaml.safe_load(ALLOWLIST.read_text())
    rules = rule_definitions()
    for entry in document["rules"]:
        spec = re.sub(r"\s+", " ", entry["spec"]).strip()
        assert spec == rules[entry["id"]]["ValidationCriteria"]["MustSatisfy"], entry["id"]
        assert entry["reason"].strip()
    several_criteria = {rule_id for rule_id, rule in rules.items() if len(rule["ApplicabilityCriteria"]) > 1}
    assert set(document["all_criteria_rules"]["rules"]) == several_criteria
