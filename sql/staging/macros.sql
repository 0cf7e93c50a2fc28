-- What the mappings of every export format onto FOCUS share: the text, money and timestamp rules
-- and the mapping tables a load fills (sql/staging/lookups.sql). Created per connection
-- (temporary), before the format's own mapping (a source kind's mapping.sql, pipelines/sources/).

-- FOCUS nulls are NULL, never blank text; what is kept is trimmed of whitespace (Unicode's). Text
-- that neither starts nor ends with whitespace is kept as it is, without a replacement (3× faster).
create or replace temp macro blank(value) as
    case
        when regexp_matches(cast(value as varchar), '^[\s\x0B\x{85}\p{Z}]|[\s\x0B\x{85}\p{Z}]$')
            then nullif(
                regexp_replace(cast(value as varchar), '^[\s\x0B\x{85}\p{Z}]+|[\s\x0B\x{85}\p{Z}]+$', '', 'g'), ''
            )
        else nullif(cast(value as varchar), '')
    end;

-- A number's digits (its whole part and fraction) as a count of 1e-10, rounded half to even.
create or replace temp macro money_digit_units(whole, fraction) as
    cast(whole || rpad(left(fraction, 10), 10, '0') as hugeint)
    + case
        when substr(fraction, 11, 1) > '5' then 1
        when substr(fraction, 11, 1) = '5'
            and (
                ltrim(substr(fraction, 12), '0') <> ''
                or right(rpad(left(fraction, 10), 10, '0'), 1) in ('1', '3', '5', '7', '9')
            )
            then 1
        else 0
    end;

-- `digits` with the decimal point after its first `point` digits (before them when negative), as
-- a count of 1e-10.
create or replace temp macro money_shifted_units(digits, point) as
    case
        when point <= 0 then money_digit_units('0', repeat('0', -point) || digits)
        when point >= length(digits) then money_digit_units(digits || repeat('0', point - length(digits)), '')
        else money_digit_units(left(digits, point), substr(digits, point + 1))
    end;

-- A number's text (`12`, `-0.5`, `1.5e-7`) rounded half to even at the 10th decimal, exactly: in
-- integer arithmetic on its digits (DuckDB's cast of text to DECIMAL(38, x) is ten times slower).
-- Blank text is NULL; other text that is not a number is an error.
create or replace temp macro text_money(text) as
    list_transform(
        [regexp_extract(
            blank(text), '^([+-]?)(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?$', ['sign', 'whole', 'fraction', 'exponent']
        )],
        number -> case
            when number.whole || number.fraction = '' then error('not a number: ' || text)
            else cast(
                cast(
                    (case when number.sign = '-' then -1 else 1 end) * money_shifted_units(
                        number.whole || number.fraction,
                        length(number.whole) + coalesce(cast(nullif(number.exponent, '') as integer), 0)
                    ) as decimal(38, 0)
                ) * cast(0.0000000001 as decimal(11, 10))
                as decimal(38, 10)
            )
        end
    )[1];

-- Money: a provider number (text, DOUBLE, integer or DECIMAL) as DECIMAL(38,10), the one
-- conversion of every mapping and every raw control total (docs/semantics.md, "Money and rounding"). The
-- number is taken as the provider wrote it (a DOUBLE by its shortest text form, so 0.1 stays 0.1)
-- and rounded half to even at the 10th decimal (`text_money`). DuckDB's cast of its DOUBLE (× 10^10,
-- rounded) is that whenever the number stays below 10^5 and the cast reads back as the same DOUBLE:
-- the DOUBLE is then the nearest to the cast, so the number is within 1.5e-11 of the cast, far from
-- a tie. That is the common case (at most 10 decimals), several times faster than the text.
create or replace temp macro money(value) as
    case
        when abs(try_cast(value as double)) < 100000
            and cast(cast(try_cast(value as double) as decimal(38, 10)) as double) = try_cast(value as double)
            then cast(try_cast(value as double) as decimal(38, 10))
        else text_money(cast(value as varchar))
    end;

-- The amounts RunLedger loads are below 10^15 in magnitude (docs/semantics.md, "Amounts"): the
-- sums, shares and exact divisions (`decimal_divide`, sql/schema/macros.sql) of a lake's lines
-- then stay within DECIMAL(38, 10) and HUGEINT. The same number as `AMOUNT_LIMIT`
-- (pipelines/warehouse/decimal_text.py).
create or replace temp macro money_limit() as cast(1000000000000000 as decimal(38, 10));

-- The columns `first_bad_money` checks that hold usage quantities in the provider's units, not
-- money: they are not bounded by `money_limit` (GCP counts bytes and byte-seconds).
create or replace temp macro is_quantity(column_name) as
    column_name in (
        'line_item_usage_amount', 'usage.amount', 'usage.amount_in_pricing_units',
        'PricingQuantity', 'ConsumedQuantity', 'CommitmentDiscountQuantity'
    );

-- The first of a row's amounts ({column_name, value as text}) that `money` does not convert, or
-- converts to money beyond `money_limit`: what stops a load, named before anything is loaded.
-- (A DOUBLE's text is its shortest form, which `money` converts as it converts the DOUBLE.)
create or replace temp macro first_bad_money(amounts) as
    list_filter(
        amounts,
        amount -> amount.value is not null and (
            try(money(amount.value)) is null
            or (not is_quantity(amount.column_name) and abs(try(money(amount.value))) >= money_limit())
        )
    )[1];

-- |money| in integer counts of 1e-10.
create or replace temp macro money_units(value) as
    abs(cast(cast(value as decimal(38, 10)) * 10000000000 as hugeint));

-- Money divided by a positive whole number, exactly and rounded half to even at the 10th decimal
-- as money is (DuckDB divides DECIMALs in DOUBLE): the quotient q and remainder r of the units
-- ÷ divisor, q + 1 when 2r is above the divisor or equal to it with q odd.
create or replace temp macro money_quotient(value, divisor) as
    cast(
        cast(
            sign(cast(value as decimal(38, 10))) * (
                money_units(value) // divisor
                + case
                    when 2 * (money_units(value) % divisor) > divisor
                        or (2 * (money_units(value) % divisor) = divisor and (money_units(value) // divisor) % 2 = 1)
                        then 1
                    else 0
                end
            ) as decimal(38, 0)
        ) * cast(0.0000000001 as decimal(11, 10))
        as decimal(38, 10)
    );

-- a × b ÷ c for money or quantities (c > 0), exactly, truncated toward zero at the 10th decimal:
-- in integer counts of 1e-10 (HUGEINT, valid while |a × b| stays below 1.7e18 in units of 1e-20).
-- What a split takes of a whole; the whole minus it is the rest, so the two sum exactly.
create or replace temp macro money_scaled(a, b, c) as
    cast(
        cast(
            sign(cast(a as decimal(38, 10))) * sign(cast(b as decimal(38, 10)))
            * (money_units(a) * money_units(b) // money_units(c)) as decimal(38, 0)
        ) * cast(0.0000000001 as decimal(11, 10))
        as decimal(38, 10)
    );

-- A FOCUS unit word or an abbreviation providers write, lower case, as its [singular, plural] in
-- FOCUS's Unit Format (data sizes abbreviated alike in both, time and count units capitalized); NULL
-- for a word FOCUS does not define. A CASE: a MAP literal is built again for every row (10× slower).
create or replace temp macro focus_unit_words(word) as
    case
        when word in ('byte', 'b') then ['B', 'B']
        when word in ('kilobyte', 'kb') then ['KB', 'KB']
        when word in ('megabyte', 'mb') then ['MB', 'MB']
        when word in ('gigabyte', 'gb') then ['GB', 'GB']
        when word in ('terabyte', 'tb') then ['TB', 'TB']
        when word in ('petabyte', 'pb') then ['PB', 'PB']
        when word in ('kibibyte', 'kib') then ['KiB', 'KiB']
        when word in ('mebibyte', 'mib') then ['MiB', 'MiB']
        when word in ('gibibyte', 'gib') then ['GiB', 'GiB']
        when word in ('tebibyte', 'tib') then ['TiB', 'TiB']
        when word in ('pebibyte', 'pib') then ['PiB', 'PiB']
        when word in ('millisecond', 'ms') then ['Millisecond', 'Milliseconds']
        when word in ('second', 'sec', 's') then ['Second', 'Seconds']
        when word in ('minute', 'min') then ['Minute', 'Minutes']
        when word in ('hour', 'hr') then ['Hour', 'Hours']
        when word = 'day' then ['Day', 'Days']
        when word in ('month', 'mo') then ['Month', 'Months']
        when word = 'year' then ['Year', 'Years']
        when word = 'request' then ['Request', 'Requests']
        when word = 'count' then ['Count', 'Counts']
        when word = 'token' then ['Token', 'Tokens']
        when word = 'character' then ['Character', 'Characters']
        when word = 'core' then ['Core', 'Cores']
    end;

-- One word of a unit as [singular, plural] FOCUS words (a trailing s of a plural ignored); NULL for
-- a word FOCUS does not define (e.g. DPU, vCPU).
create or replace temp macro focus_unit_word(word) as
    coalesce(focus_unit_words(lower(word)), focus_unit_words(regexp_replace(lower(word), 's$', '')));

-- A provider's unit in FOCUS's Unit Format, the quantity unchanged, the one rule every mapping
-- applies to PricingUnit and ConsumedUnit (the provider's text is kept in x_ProviderPricingUnit /
-- x_ProviderConsumedUnit): `Hrs` → Hours, `GB-Mo` → GB-Months, `DPU-Hour` → DPU-Hours,
-- `byte-seconds` → B-Seconds, `gibibyte month` → GiB-Months, `1000 requests` → 1000 Requests. One
-- word becomes its plural; two (split at a space or hyphen) the first's singular (kept as written
-- when FOCUS has no such word), a hyphen and the second's plural; an optional leading whole-number
-- quantity stays. A unit whose last word FOCUS does not define is kept as written.
create or replace temp macro focus_unit(unit) as
    list_transform(
        [regexp_extract(blank(unit), '^(?:(\d+) )?([^ -]+?)(?:[ -]([^ -]+))?$', ['quantity', 'first', 'second'])],
        parts -> case
            when blank(unit) is null then null
            when parts.first = '' then blank(unit)
            when parts.second = '' and focus_unit_word(parts.first) is null then blank(unit)
            when parts.second = '' then concat_ws(' ', nullif(parts.quantity, ''), focus_unit_word(parts.first)[2])
            when focus_unit_word(parts.second) is null then blank(unit)
            else concat_ws(
                ' ',
                nullif(parts.quantity, ''),
                coalesce(focus_unit_word(parts.first)[1], parts.first) || '-' || focus_unit_word(parts.second)[2]
            )
        end
    )[1];

-- The FOCUS unit (`focus_unit`) of each distinct unit a delivery's rows name, filled before its
-- mapping (sql/staging/lookups.sql): the mapping joins it rather than converting every row's unit
-- (which took five times the rest of the CUR 2.0 mapping).
create or replace temp table unit_names (provider_unit varchar, focus_unit varchar);

-- A TIMESTAMP (UTC) or TIMESTAMP WITH TIME ZONE as a UTC TIMESTAMP, whatever the session's zone.
create or replace temp macro utc_timestamp(value) as make_timestamp(epoch_us(value));

-- The FOCUS ServiceCategory of a cost category, for lines whose export names none.
create or replace temp macro cost_category_service_category(cost_category) as
    case cost_category
        when 'compute' then 'Compute'
        when 'storage' then 'Storage'
        when 'network' then 'Networking'
        when 'data' then 'Analytics'
        when 'monitoring' then 'Management and Governance'
        else 'Other'
    end;

-- The delivery's files in delivery order: where the user finds each, and the delivery's row
-- number of its first row (CUR 2.0 numbers rows across the whole delivery).
create or replace temp table delivery_files (file varchar, location varchar, first_row bigint);

-- The cost category rules as LIKE patterns (NULL: any value), first (lowest rule_order) wins.
create or replace temp table category_rules (
    rule_order integer,
    provider varchar,
    service varchar,
    service_category varchar,
    detail varchar,
    charge_category varchar,
    cost_category varchar
);

-- Each distinct (provider, service, service category, detail, charge category) the delivery holds.
create or replace temp table category_inputs (
    provider varchar,
    service varchar,
    service_category varchar,
    detail varchar,
    charge_category varchar
);

-- Of each category_inputs row: its x_CostCategory, the ServiceCategory of a line whose export
-- names none (its service's, else its cost category's) and the FOCUS ServiceSubcategory of that
-- ServiceCategory (the first matching rule of service_subcategory_rules, else `Other (category)`).
create or replace temp table line_categories (
    provider varchar,
    service varchar,
    service_category varchar,
    detail varchar,
    charge_category varchar,
    cost_category varchar,
    default_service_category varchar,
    service_subcategory varchar
);

-- The ServiceSubcategory rules as LIKE patterns (NULL: any value), first (lowest rule_order) of
-- the line's ServiceCategory wins.
create or replace temp table service_subcategory_rules (
    rule_order integer,
    provider varchar,
    service varchar,
    detail varchar,
    service_category varchar,
    service_subcategory varchar
);

-- Display names of provider regions.
create or replace temp table region_names (provider varchar, region_id varchar, region_name varchar);

-- GPUs per instance type, keyed by gpu_instance_key (sql/staging/lookups.sql fills it): the one
-- lookup of every format's x_GpuCount.
create or replace temp table gpu_instance_types (instance_type varchar, gpus integer);

-- The key an instance type is looked up by in gpu_instance_types: lower case, without SageMaker's
-- `ml.` and Azure's `Standard_` prefix (`ml.p5.48xlarge` has the GPUs of `p5.48xlarge`).
create or replace temp macro gpu_instance_key(instance_type) as
    regexp_replace(lower(trim(instance_type)), '^(ml\.|standard_)', '');

create or replace temp table service_categories (
    provider varchar, service varchar, service_category varchar, service_subcategory varchar
);
