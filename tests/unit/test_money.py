"""The one money conversion (`money` in sql/staging/macros.sql, docs/semantics.md "Money and rounding"): every
mapping and every raw control total turn a provider's number into DECIMAL(38,10) with it. The
expectations are Python's Decimal of the number as the provider wrote it, rounded half to even.
An amount of money must be below 10^15 (docs/semantics.md "Amounts")."""

from __future__ import annotations

import random
from decimal import ROUND_HALF_EVEN, Decimal

import duckdb
import pytest

from pipelines.warehouse.decimal_text import AMOUNT_LIMIT
from pipelines.warehouse.sql import read_sql

TENTH_DECIMAL = Decimal("1e-10")


def as_money(text: str) -> Decimal:
    return Decimal(text.strip()).quantize(TENTH_DECIMAL, rounding=ROUND_HALF_EVEN)


@pytest.fixture(scope="module")
def conn() -> duckdb.DuckDBPyConnection:
    with duckdb.connect() as connection:
        connection.execute(read_sql("staging/macros"))
        yield connection


def converted(conn: duckdb.DuckDBPyConnection, values: list, sql_type: str) -> list[Decimal | None]:
    return [
        value
        for (value,) in conn.execute(
            f"select money(cast(value as {sql_type})) "
            "from unnest($values) with ordinality as t(value, position) order by position",
            {"values": values},
        ).fetchall()
    ]


def random_doubles() -> list[float]:
    generator = random.Random(9)
    return [
        round(generator.uniform(-1, 1) * magnitude, generator.randint(0, 17))
        for magnitude in (1e-6, 1, 1e3, 1e5, 1e6, 1e9, 1e15)
        for _ in range(3000)
    ]


def test_a_double_is_its_shortest_text_rounded_half_to_even(conn: duckdb.DuckDBPyConnection) -> None:
    # repr() is the shortest text that reads back as the same double: 0.1 stays 0.1
    doubles = [*random_doubles(), 0.1, 0.00000000005, 0.00000000015, -0.00000000025, 123456.12345678905, 1e-5, 2.5e-11]
    assert converted(conn, doubles, "double") == [as_money(repr(value)) for value in doubles]


def test_a_text_is_rounded_half_to_even_as_written(conn: duckdb.DuckDBPyConnection) -> None:
    texts = [repr(value) for value in random_doubles()[::7]]
    texts += [
        "0.00000000005",  # a tie rounds to the even 10th decimal: 0
        "0.00000000015",  # up to 2
        "-0.00000000025",  # to -2
        "-0.00000000035",  # to -4
        "0.000000000250000000000001",  # above the tie, however far: 3
        "1.23456789005",
        " 1.5 ",
        "+.5e1",
        "5.",
        "-0",
        "00012.50",
        "748800",
        "247390116249600",
        "1.5e-7",
        "1.2345e+15",
        "123456789012345678.5",
    ]
    assert converted(conn, texts, "varchar") == [as_money(text) for text in texts]


def test_blank_text_is_null_and_other_text_is_refused(conn: duckdb.DuckDBPyConnection) -> None:
    assert converted(conn, ["", "  ", None], "varchar") == [None, None, None]
    for text in ["12,5 USD", "NaN", "inf", "x", "1.2.3", ".", "e5", "1e400"]:
        with pytest.raises(duckdb.Error):
            conn.execute("select money(cast($value as varchar))", {"value": text}).fetchall()
    for number in [float("nan"), float("inf"), 1e300]:
        with pytest.raises(duckdb.Error):
            conn.execute("select money(cast($value as double))", {"value": number}).fetchall()


def test_integers_and_decimals_keep_their_value(conn: duckdb.DuckDBPyConnection) -> None:
    assert converted(conn, [0, 7, -123456789012], "bigint") == [Decimal(0), Decimal(7), Decimal(-123456789012)]
    assert converted(conn, ["0.123456789049", "99999.99999999995"], "decimal(38, 12)") == [
        Decimal("0.1234567890"),
        Decimal("100000.0000000000"),
    ]


@pytest.mark.parametrize(
    ("column", "value", "refused"),
    [
        ("BilledCost", "999999999999999.9999999999", False),
        ("BilledCost", "-1000000000000000", True),  # 10^15: what sums and exact divisions could not hold
        ("line_item_unblended_cost", "1e+18", True),
        ("cost", "9999999999999999999999999999", True),  # DECIMAL(38, 10) holds it, the arithmetic does not
        ("usage.amount", "2.6e18", False),  # a quantity (GCP byte-seconds), not money
        ("ConsumedQuantity", "nan", True),
    ],
)
def test_an_amount_of_money_must_be_below_10_to_the_15(
    conn: duckdb.DuckDBPyConnection, column: str, value: str, refused: bool
) -> None:
    (bad,) = conn.execute(
        "select first_bad_money([{'column_name': $column, 'value': $value}])", {"column": column, "value": value}
    ).fetchone()
    assert (bad is not None) == refused
    assert conn.execute("select money_limit()").fetchone() == (AMOUNT_LIMIT,)


@pytest.mark.parametrize(
    ("seconds", "hours"),
    [
        ("28800", "8"),
        ("5400.5", "1.5001388889"),  # 1.500138888…, rounded up
        ("0.00000018", "0"),  # 5e-11: a tie, to the even 0
        ("0.00000054", "0.0000000002"),  # 1.5e-10: a tie, to the even 2
        ("-0.00000054", "-0.0000000002"),
        ("12345678.1234567891", "3429.3550342936"),
    ],
)
def test_a_quotient_of_money_rounds_as_money(conn: duckdb.DuckDBPyConnection, seconds: str, hours: str) -> None:
    (quotient,) = conn.execute("select money_quotient(money($seconds), 3600)", {"seconds": seconds}).fetchone()
    assert quotient == Decimal(hours)
