-- decimal_divide(numerator, denominator): the quotient as DECIMAL(38, 10), rounded half away from
-- zero like DuckDB's round() and decimal casts; NULL when the denominator is 0 or NULL.
-- DuckDB divides DECIMALs in DOUBLE (about 16 significant digits), so this reads both operands as
-- integer counts of 1e-10 (n, d) and divides exactly in HUGEINT:
--     round(n * 1e10 / d) = sign(n) * sign(d) * ((2 * |n| * 1e10 + |d|) // (2 * |d|))
-- then scales the result back by 1e-10. Valid while |numerator| < 8.5e17 and the quotient < 1e18;
-- beyond that DuckDB raises an overflow error rather than returning a wrong number.
-- Created with the schema (pipelines/warehouse.py), so every connection has it.
create or replace macro decimal_divide(numerator, denominator) as (
    case
        when denominator <> 0 then cast(
            cast(
                sign(numerator) * sign(denominator) * (
                    (
                        2 * cast(abs(cast(numerator as decimal(38, 10))) * 10000000000 as hugeint)
                        * 10000000000
                        + cast(abs(cast(denominator as decimal(38, 10))) * 10000000000 as hugeint)
                    )
                    // (
                        2 * cast(abs(cast(denominator as decimal(38, 10))) * 10000000000 as hugeint)
                    )
                ) as decimal(38, 10)
            ) * cast(0.0000000001 as decimal(11, 10))
            as decimal(38, 10)
        )
    end
)
