"""The FOCUS 1.2 column list the export orders its columns by (pipelines/data/focus_columns.csv)."""

import csv

from pipelines.export.focus import COLUMNS_FILE, export_order, focus_columns


def test_the_list_is_focus_1_2s_columns_section_in_its_alphabetical_order() -> None:
    with COLUMNS_FILE.open(newline="") as file:
        rows = list(csv.DictReader(file))
    names = [row["display_name"] for row in rows]
    # the specification presents its columns in alphabetical order of their display names
    assert names == sorted(names, key=str.lower)
    assert len(rows) == 57 and len(set(focus_columns())) == 57
    assert focus_columns()[:3] == ("AvailabilityZone", "BilledCost", "BillingAccountId")
    assert {"InvoiceIssuerName", "ProviderName", "PublisherName", "SkuPriceDetails", "Tags"} <= set(focus_columns())


def test_the_export_puts_focus_columns_first_and_extensions_after() -> None:
    table = ["BillingAccountId", "x_LineItemKey", "Tags", "BilledCost", "x_SourceName", "AvailabilityZone"]
    assert export_order(table) == [
        "AvailabilityZone",
        "BilledCost",
        "BillingAccountId",
        "Tags",
        "x_LineItemKey",
        "x_SourceName",
    ]


def test_a_column_neither_focus_nor_extension_is_refused() -> None:
    try:
        export_order(["BilledCost", "Cost"])
    except ValueError as error:
        assert "['Cost']" in str(error)
    else:
        raise AssertionError("a column that is neither FOCUS 1.2 nor x_ was exported")
