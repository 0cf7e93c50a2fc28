-- Tag keys compare case-insensitively with '-', ' ', ':' as '_' and AWS's user_/user: prefix ignored.
create or replace macro normalize_tag_key(tag_key) as
    regexp_replace(regexp_replace(lower(trim(tag_key)), '[-\s:]', '_', 'g'), '^user_', '');

-- A resource id as ARNs and bare ids both reduce to it, so CUR lines and Tagging API ARNs join:
-- arn:aws:s3:::bucket → bucket; arn:…:instance/i-0abc → i-0abc; a bare id stays as it is.
create or replace macro normalize_resource_id(resource_id) as
    case
        when resource_id is null then null
        when resource_id like 'arn:%:s3:::%' then split_part(resource_id, ':::', 2)
        when resource_id like 'arn:%/%' then regexp_extract(resource_id, '/([^/]+)$', 1)
        when resource_id like 'arn:%' then regexp_extract(resource_id, ':([^:]+)$', 1)
        else resource_id
    end;

-- A row of one billing period (its first day): the same as date_trunc('month', start) = period,
-- written as a range so DuckDB skips the row groups of other periods.
create or replace macro in_billing_period(billing_period_start, billing_period) as
    billing_period_start >= billing_period and billing_period_start < billing_period + interval 1 month;

-- The first of tag_keys (in priority order) that the tags map carries with a non-blank value, as
-- {tag_key, tag_value}; NULL when none does.
create or replace macro first_tag(tags, tag_keys) as
    list_filter(
        list_transform(tag_keys, lambda tag_key: {'tag_key': tag_key, 'tag_value': nullif(trim(tags[tag_key]), '')}),
        lambda tag: tag.tag_value is not null
    )[1];

-- decimal_divide(numerator, denominator): the quotient as DECIMAL(38, 10), rounded half away from
-- zero like DuckDB's round() and decimal casts; NULL when the denominator is 0 or NULL.
-- DuckDB divides DECIMALs in DOUBLE (about 16 significant digits), so this reads both operands as
-- integer counts of 1e-10 (n, d) and divides exactly in HUGEINT:
--     round(n * 1e10 / d) = sign(n) * sign(d) * ((2 * |n| * 1e10 + |d|) // (2 * |d|))
-- then scales the result back by 1e-10. Valid while |numerator| < 8.5e17 and the quotient < 1e18;
-- beyond that DuckDB raises an overflow error rather than returning a wrong number.
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
);
