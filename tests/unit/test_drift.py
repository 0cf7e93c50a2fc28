"""Schema drift: a delivery's columns against what its reader maps and its format knows."""

from datetime import date
from pathlib import Path

from pipelines.sources.aws_cur.drift import CUR2_MAPPED_COLUMNS
from pipelines.sources.focus.reader import FocusFilesReader
from pipelines.sources.registry import column_drift


def test_the_public_focus_sample_drifts_only_by_its_own_id_column(focus_sample: Path, tmp_path: Path) -> None:
    # every FOCUS 1.0 column of the sample is a column of the table; `Id` is the sample's own (not
    # FOCUS, without the x_ prefix), kept in x_ExtraColumns and reported as new
    reader = FocusFilesReader("sample", [focus_sample], tmp_path)
    source_format, _, columns = reader.delivery_columns(date(2024, 9, 1))
    assert source_format == "focus" and "Id" in columns and "RegionName" in columns
    drift = column_drift("focus", columns)
    assert (drift.missing, drift.new) == ((), ("Id",))


def test_drift_names_missing_and_new_columns() -> None:
    cur2 = [c for c in CUR2_MAPPED_COLUMNS if c != "resource_tags"] + ["line_item_legal_entity", "carbon_kg"]
    drift = column_drift("aws_cur2", cur2)
    assert (drift.missing, drift.new) == (("resource_tags",), ("carbon_kg",))
    focus = column_drift(
        "aws_focus",
        [
            "BilledCost",
            "EffectiveCost",
            "BillingCurrency",
            "BillingPeriodStart",
            "ChargePeriodStart",
            "ProviderName",
            "x_Discounts",
            "ContractedCost2",
        ],
    )
    assert focus.missing == (
        "ChargeCategory",
        "ChargePeriodEnd",
        "BillingPeriodEnd",
        "ResourceId",
        "ServiceName",
        "Tags",
    )
    assert focus.new == ("ContractedCost2",)
