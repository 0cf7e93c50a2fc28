"""FOCUS 1.0-1.2 exports (CSV or Parquet), read for DuckDB's mapping onto `focus_line_items`
(`focus_mapping.sql` beside this module).

Polars types each file into a Parquet file DuckDB maps (`write_typed`): CSV is read as text (the
literal `NULL` is NULL) and stays text but for its timestamps, so money converts from its decimal
text exactly; the FOCUS timestamps are parsed (in UTC); `Tags` (a JSON object string in CSV, a map
in Parquet) become key/value entries, every key kept, values as their text, unescaped (Tags text
that is not a JSON object of tags is refused); `SkuPriceDetails` becomes JSON object text whether
the file has text, a map or a struct. A file's columns that are not `focus_line_items` columns (its
own `x_` columns, columns of other FOCUS versions) become `_extra_columns`, name to value as text,
so every file of a delivery has the same columns whatever else it carries.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import date, datetime
from decimal import Decimal
from functools import cache
from pathlib import Path

import polars as pl

from connectors.errors import SourceError, missing_columns_error
from pipelines.sources.delivery import FormatMapping, MappedDelivery, create_mapping, fetch_dict, memory_connection
from pipelines.sources.mappings import MappingRule
from pipelines.warehouse.catalog import table_columns
from pipelines.warehouse.sql import read_sql_file

MAPPING = FormatMapping("focus", Path(__file__).with_name("focus_mapping.sql"), reads_focus_columns=True)
TOTALS = Path(__file__).with_name("focus_totals.sql")

REQUIRED_COLUMNS = (
    "BilledCost",
    "EffectiveCost",
    "BillingCurrency",
    "BillingPeriodStart",
    "ChargePeriodStart",
    "ProviderName",
)
CSV_NULLS = ["NULL", ""]
# A member of a JSON object of tags: its key and its value as JSON text (a string with its quotes).
TAG_PAIR = r'("(?:[^"\\]|\\.)*")\s*:\s*("(?:[^"\\]|\\.)*"|-?[0-9][0-9.eE+-]*|true|false|null)'
# FOCUS's Key-Value Format: a JSON object whose values are strings, numbers, booleans or null.
JSON_SPACE = r"[ \t\r\n]*"
JSON_STRING = r'"(?:[^"\\\x00-\x1f]|\\["\\/bfnrt]|\\u[0-9A-Fa-f]{4})*"'
JSON_SCALAR = rf"(?:{JSON_STRING}|-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?|true|false|null)"
TAG_MEMBER = rf"{JSON_SPACE}{JSON_STRING}{JSON_SPACE}:{JSON_SPACE}{JSON_SCALAR}{JSON_SPACE}"
TAGS_OBJECT = rf"^{JSON_SPACE}\{{(?:{TAG_MEMBER}(?:,{TAG_MEMBER})*|{JSON_SPACE})\}}{JSON_SPACE}$"
TAGS = pl.List(pl.Struct({"key": pl.String, "value": pl.String}))
TIMESTAMP_TEXT = r"(?i)(Z|UTC|\+00:?00)$"
TIMESTAMP_FORMS = ("%Y-%m-%d %H:%M:%S%.f", "%Y-%m-%d %H:%M", "%Y-%m-%d")
QUOTED_VALUE_LIMIT = 200  # characters of a bad value an error message quotes
UNPARSED = pl.Struct({"column_name": pl.String, "value": pl.String})
# RunLedger extensions a FOCUS file may carry (a RunLedger export read back) that are read into
# their own columns; the file's other x_ columns are kept in x_ExtraColumns.
READ_EXTENSIONS = ("x_InstanceType", "x_ProviderPricingUnit", "x_ProviderConsumedUnit")


@cache
def timestamp_columns() -> tuple[str, ...]:
    """The FOCUS timestamp columns: focus_line_items' own TIMESTAMP columns."""
    return tuple(
        name for name, type_ in table_columns("focus_line_items").items() if type_ == "TIMESTAMP" and name[:2] != "x_"
    )


@cache
def read_columns() -> frozenset[str]:
    """The columns of a FOCUS file read into their own `focus_line_items` column: every FOCUS
    column of the table and `READ_EXTENSIONS`; any other column goes to x_ExtraColumns."""
    return frozenset(name for name in table_columns("focus_line_items") if name[:2] != "x_") | set(READ_EXTENSIONS)


def scan_focus(file: Path) -> pl.LazyFrame:
    """One file of the export, lazily, after checking it has the columns FOCUS cannot do without.

    Raises:
        SourceError: naming the file when it cannot be read or lacks a required column.
    """
    try:
        if file.name.lower().endswith(".parquet"):
            frame = pl.scan_parquet(file)
        else:
            frame = pl.scan_csv(file, infer_schema=False, null_values=CSV_NULLS)
        schema_names = frame.collect_schema().names()
    except (pl.exceptions.PolarsError, OSError) as error:
        raise SourceError(f"cannot read FOCUS file {file}: {error}") from None
    missing = [c for c in REQUIRED_COLUMNS if c not in schema_names]
    if missing:
        raise missing_columns_error(file, "FOCUS", missing, schema_names)
    return frame


def delivered_columns(files: Sequence[Path]) -> list[str]:
    """The columns of the export's files, as they name them."""
    columns: dict[str, None] = {}
    for file in files:
        columns.update(dict.fromkeys(scan_focus(file).collect_schema().names()))
    return list(columns)


def _timestamp_text(name: str) -> pl.Expr:
    stripped = pl.col(name).str.strip_chars()
    return pl.when(stripped != "").then(stripped).str.replace(TIMESTAMP_TEXT, "").str.replace("T", " ")


def _as_timestamp(schema: pl.Schema, name: str) -> pl.Expr:
    """A FOCUS timestamp as a UTC datetime: text in one of the ISO 8601 forms FOCUS exports use
    (NULL when in none), or a datetime (converted to UTC when it has a time zone)."""
    if schema[name] == pl.String:
        text = _timestamp_text(name)
        return pl.coalesce(*[text.str.to_datetime(form, time_unit="us", strict=False) for form in TIMESTAMP_FORMS])
    if getattr(schema[name], "time_zone", None):
        return pl.col(name).cast(pl.Datetime("us", "UTC")).dt.replace_time_zone(None)
    return pl.col(name).cast(pl.Datetime("us"))


def _unparsed_key_values(schema: pl.Schema) -> pl.Expr:
    """{column_name, value} of the first of Tags and SkuPriceDetails whose text is not a JSON object
    in FOCUS's key-value format (string, number, boolean or null values), or is Tags repeating a
    key; NULL where both are blank, NULL, a map or a struct."""
    unparsed = []
    for name in ("Tags", "SkuPriceDetails"):
        if name not in schema or schema[name] != pl.String:
            continue
        text = pl.col(name)
        bad = (text.str.strip_chars() != "") & ~text.str.contains(TAGS_OBJECT)
        if name == "Tags":
            keys = _tags(schema).list.eval(pl.element().struct.field("key"))
            bad = bad | (keys.list.n_unique() < keys.list.len())
        unparsed.append(pl.when(bad).then(pl.struct(pl.lit(name).alias("column_name"), text.alias("value"))))
    if not unparsed:
        return pl.lit(None, dtype=UNPARSED).alias("_unparsed_key_value")
    return pl.coalesce(unparsed).alias("_unparsed_key_value")


def _json_string(text: pl.Expr) -> pl.Expr:
    """A JSON string's text (its quotes and escapes undone); NULL for any other JSON text."""
    return pl.when(text.str.starts_with('"')).then(text).str.json_decode(pl.String)


def _tags(schema: pl.Schema) -> pl.Expr:
    """Tags as key/value entries, every key kept: from a JSON object string (keys and string values
    unescaped, numbers and booleans as written, a null value NULL), or a map."""
    if schema["Tags"] == pl.String:
        pairs = pl.col("Tags").fill_null("").str.extract_all(TAG_PAIR)
        value = pl.element().str.extract(TAG_PAIR, 2)
        return pairs.list.eval(
            pl.struct(
                _json_string(pl.element().str.extract(TAG_PAIR, 1)).alias("key"),
                pl.when(value.str.starts_with('"'))
                .then(_json_string(value))
                .when(value != "null")
                .then(value)
                .alias("value"),
            )
        )
    return pl.col("Tags").cast(TAGS)


def _json_value(value: pl.Expr) -> pl.Expr:
    """Any value as JSON text (strings quoted and escaped, NULL as null)."""
    return pl.struct(value.alias("v")).struct.json_encode().str.slice(len('{"v":')).str.head(-1)


def _is_map(dtype: pl.DataType) -> bool:
    """Whether a column is a Parquet map as polars reads it: a list of {key, value}."""
    return (
        isinstance(dtype, pl.List)
        and isinstance(dtype.inner, pl.Struct)
        and [field.name for field in dtype.inner.fields] == ["key", "value"]
    )


def _as_text(schema: pl.Schema, name: str) -> pl.Expr:
    """A column's values as text: text as it is, a map as a JSON object, a struct or list as its
    JSON, anything else as polars writes it (numbers, booleans `true`/`false`, timestamps)."""
    dtype = schema[name]
    column = pl.col(name)
    if dtype == pl.String:
        return column
    if _is_map(dtype):
        members = column.list.eval(
            pl.concat_str(
                _json_value(pl.element().struct.field("key")),
                pl.lit(":"),
                _json_value(pl.element().struct.field("value")),
            )
        )
        return pl.when(column.is_not_null()).then(pl.concat_str(pl.lit("{"), members.list.join(","), pl.lit("}")))
    if isinstance(dtype, pl.Struct | pl.List | pl.Array):
        return pl.when(column.is_not_null()).then(_json_value(column))
    if dtype == pl.Boolean:
        return pl.when(column).then(pl.lit("true")).when(~column).then(pl.lit("false"))
    return column.cast(pl.String)


def _extra_columns(schema: pl.Schema) -> pl.Expr:
    """The file's columns that are not `read_columns`, as {key: name, value: text} entries (a NULL
    value kept as NULL)."""
    extra = [name for name in schema if name not in read_columns()]
    if not extra:
        return pl.lit([], dtype=TAGS).alias("_extra_columns")
    return pl.concat_list(
        [pl.struct(pl.lit(name).alias("key"), _as_text(schema, name).alias("value")) for name in extra]
    ).alias("_extra_columns")


def scan_periods(files: Sequence[Path]) -> pl.LazyFrame:
    """The billing period (first day of BillingPeriodStart's month) of each row of the files, as
    `period`, with its file (`file`) and row (`_row`, 0-based), lazily; and `unparsed`, where
    BillingPeriodStart is text that is not a timestamp ({file, row, value}; `period` is NULL there).

    Raises:
        SourceError: naming a file that cannot be read or lacks a required column.
    """
    frames = []
    for file in files:
        frame = scan_focus(file)
        schema = frame.collect_schema()
        start = _as_timestamp(schema, "BillingPeriodStart")
        text = pl.col("BillingPeriodStart") if schema["BillingPeriodStart"] == pl.String else pl.lit(None, pl.String)
        unparsed = pl.struct(pl.lit(str(file)).alias("file"), pl.col("_row"), text.alias("value"))
        frames.append(
            frame.with_row_index("_row").select(
                start.dt.truncate("1mo").dt.date().alias("period"),
                pl.when(text.is_not_null() & start.is_null()).then(unparsed).alias("unparsed"),
                pl.lit(str(file)).alias("file"),
                pl.col("_row").cast(pl.Int64),
            )
        )
    return pl.concat(frames)


def unparsed_timestamp_error(location: str, row: int, column: str, value: str) -> SourceError:
    """The error for a FOCUS timestamp that is not one: its file, row (0-based here), column and text."""
    return SourceError(
        f"{location}, row {row + 1}, column {column}: {value!r} is not a timestamp YYYY-MM-DD HH:MM:SS "
        "(optionally with T and Z); fix or re-export the file, nothing was loaded"
    )


def write_typed(file: Path, target: Path) -> None:
    """One file of the export as the Parquet file DuckDB maps: its timestamps in UTC, Tags as
    key/value entries, SkuPriceDetails as JSON object text, the other columns of `read_columns` as
    the file has them and the rest in `_extra_columns`; rows in file order (a row's key is its
    place). A row's first timestamp text that is not a timestamp is kept, with its column, in
    `_unparsed_timestamp`, and Tags or SkuPriceDetails text that is not a JSON object of
    key-value pairs (or Tags repeating a key) in `_unparsed_key_value`
    (`read_delivery` refuses either).

    Raises:
        SourceError: naming the file when it cannot be read.
    """
    frame = scan_focus(file)
    schema = frame.collect_schema()
    timestamps = [name for name in timestamp_columns() if name in schema]
    typed = frame.with_columns(
        *[_as_timestamp(schema, name).alias(name) for name in timestamps],
        *([_tags(schema).alias("Tags")] if "Tags" in schema else []),
        *([_as_text(schema, "SkuPriceDetails").alias("SkuPriceDetails")] if "SkuPriceDetails" in schema else []),
        _unparsed_timestamp(schema, [name for name in timestamps if schema[name] == pl.String]),
        _unparsed_key_values(schema),
        _extra_columns(schema),
    ).select(
        *[name for name in schema if name in read_columns()],
        "_unparsed_timestamp",
        "_unparsed_key_value",
        "_extra_columns",
    )
    try:
        typed.sink_parquet(target)
    except (pl.exceptions.PolarsError, OSError) as error:
        target.unlink(missing_ok=True)
        raise SourceError(f"cannot read FOCUS file {file}: {error}") from None


def _unparsed_timestamp(schema: pl.Schema, text_columns: list[str]) -> pl.Expr:
    """{column_name, value} of the first of `text_columns` whose text is not a timestamp."""
    unparsed = [
        pl.when(pl.col(name).is_not_null() & _as_timestamp(schema, name).is_null()).then(
            pl.struct(pl.lit(name).alias("column_name"), pl.col(name).alias("value"))
        )
        for name in text_columns
    ]
    if not unparsed:
        return pl.lit(None, dtype=UNPARSED).alias("_unparsed_timestamp")
    return pl.coalesce(unparsed).alias("_unparsed_timestamp")


def read_delivery(
    files: Sequence[Path],
    locations: Sequence[str],
    *,
    source_name: str,
    source_format: str,
    billing_period: date,
    select_period: bool,
    category_rules: Sequence[MappingRule],
    ingested_at: datetime,
) -> tuple[MappedDelivery, int, Decimal]:
    """Reads the delivery's typed files (in an in-memory DuckDB): refuses a money value that is not
    a finite number, a timestamp that is not one, Tags or SkuPriceDetails that are not a JSON
    object of key-value pairs or a charge period ending before it starts, then the raw control
    totals, row count and Σ BilledCost of the period.

    Args:
        files: the files as `write_typed` writes them.
        locations: where the user finds each file.
        source_name, source_format, category_rules, ingested_at: what the rows are mapped with.
        billing_period: the first day of the period.
        select_period: whether the files hold several periods (a folder of FOCUS files), of which
            the delivery is the period's rows; else every row is the period's (an AWS FOCUS export).

    Returns:
        The delivery, its rows and its raw BilledCost.

    Raises:
        SourceError: naming the file, the row (1-based, header not counted), the column and the
            value of the first money value that is not a finite number below 10^15, timestamp that
            is not one, Tags or SkuPriceDetails text that is not a JSON object of key-value pairs,
            or ChargePeriodEnd before ChargePeriodStart.
    """
    read_params = {"billing_period": billing_period, "select_period": select_period}
    with memory_connection() as conn:
        create_mapping(conn, MAPPING, files, locations)
        bad = fetch_dict(conn, read_sql_file(TOTALS, "first_bad_value"), {"files": [str(f) for f in files]})
        if bad is not None and bad["column_name"] in ("Tags", "SkuPriceDetails"):
            raise _key_value_error(bad["location"], bad["file_row_number"], bad["column_name"], bad["value"])
        if bad is not None and bad["period_start"] is not None:
            raise SourceError(
                f"{bad['location']}, row {bad['file_row_number'] + 1}, column ChargePeriodEnd: {bad['value']!r} is "
                f"before ChargePeriodStart {bad['period_start']!r}; fix or re-export the file, nothing was loaded"
            )
        if bad is not None and bad["is_timestamp"]:
            raise unparsed_timestamp_error(bad["location"], bad["file_row_number"], bad["column_name"], bad["value"])
        if bad is not None:
            raise SourceError(
                f"{bad['location']}, row {bad['file_row_number'] + 1}, column {bad['column_name']}: "
                f"{bad['value']!r} is not a finite number below 10^15; fix or re-export the file, nothing was loaded"
            )
        totals = fetch_dict(conn, read_sql_file(TOTALS, "totals"), {"files": [str(f) for f in files], **read_params})
    delivery = MappedDelivery(
        mapping=MAPPING,
        files=tuple(files),
        locations=tuple(locations),
        first_rows=(0,) * len(files),
        read_params=read_params,
        row_params={"source_name": source_name, "source_format": source_format, "ingested_at": ingested_at},
        category_rules=tuple(category_rules),
        currencies=tuple(sorted(totals["currencies"] or ())),
        rows_outside_period=totals["rows_outside_period"],
        file_outside_period=totals["file_outside_period"],
    )
    return delivery, totals["rows"], totals["billed_cost"]


def _key_value_error(location: str, row: int, column: str, value: str) -> SourceError:
    """The error for Tags or SkuPriceDetails text that is not a JSON object of key-value pairs, or
    Tags repeating a key: its file, row (0-based here), column and text."""
    where = f"{location}, row {row + 1}, column {column}: {_shortened(value)!r}"
    repeated = _repeated_key(value)
    if repeated is not None:
        return SourceError(f"{where} repeats the key {repeated!r}; fix or re-export the file, nothing was loaded")
    example = '{"training_run": "llm-7b-pt-r1"}' if column == "Tags" else '{"InstanceType": "p5.48xlarge"}'
    what = "tags" if column == "Tags" else "SKU price properties"
    return SourceError(
        f"{where} is not a JSON object of {what} (e.g. {example}); fix or re-export the file, nothing was loaded"
    )


def _repeated_key(text: str) -> str | None:
    """The first key a JSON object text repeats; None when it repeats none or is no JSON object."""
    repeated: list[str] = []

    def pairs(members: list[tuple[str, object]]) -> dict[str, object]:
        keys = [key for key, _ in members]
        repeated.extend(key for number, key in enumerate(keys) if key in keys[:number])
        return dict(members)

    try:
        json.loads(text, object_pairs_hook=pairs)
    except ValueError:
        return None
    return repeated[0] if repeated else None


def _shortened(value: str) -> str:
    """A value for an error message: its first QUOTED_VALUE_LIMIT characters, then `…`."""
    return value if len(value) <= QUOTED_VALUE_LIMIT else f"{value[:QUOTED_VALUE_LIMIT]}…"
