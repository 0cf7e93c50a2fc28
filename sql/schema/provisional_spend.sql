-- Spend since each run's newest billed hour, estimated from its events while the bill lags, and the
-- ledger of how far off each estimate was once the bill covered it.
create table if not exists provisional_spend (
    training_run varchar not null,
    currency varchar,
    billed_through timestamp not null,
    estimated_through timestamp not null,
    gpu_hours decimal(38, 10) not null,
    rate decimal(38, 10) not null,
    estimated_cost decimal(38, 10) not null,
    status varchar not null,
    billed_cost decimal(38, 10),
    error decimal(38, 10),
    error_pct decimal(38, 10)
);

-- What the table and each column hold (read into DuckDB's catalog, the Dagster column schemas and
-- docs/warehouse.md).
comment on table provisional_spend is
    'Spend the bill does not show yet: per run with events after its newest billed hour, the GPU-hours its events '
    'say it trained since (productive time x GPUs) at its observed cost per GPU-hour, status provisional; once the '
    'bill covers the window the row becomes billed, with the billed cost and the error. A provisional row is '
    'estimated again every run; a billed row stays as the ledger of past estimates. Money is DECIMAL(38,10) in the '
    'run''s billing currency.';
comment on column provisional_spend.training_run is 'The run (one with events and billed usage).';
comment on column provisional_spend.currency is 'The billing currency of the run''s usage lines.';
comment on column provisional_spend.billed_through is
    'The window''s start: the run''s newest billed hour when it was estimated (the latest ChargePeriodEnd of its '
    'usage lines of a day or shorter).';
comment on column provisional_spend.estimated_through is 'The window''s end: the run''s latest event.';
comment on column provisional_spend.gpu_hours is
    'GPU-hours of the window from the events: hours the run trained (after a start or resume, until a failure or '
    'an end) x the gpus of its latest start or resume.';
comment on column provisional_spend.rate is
    'The run''s observed effective cost per GPU-hour: the effective cost of its usage lines of a day or shorter / '
    'their GPU-hours, up to billed_through.';
comment on column provisional_spend.estimated_cost is
    'The spend estimated for the window: gpu_hours x the cost the rate divides / its GPU-hours, rounded to 10 places.';
comment on column provisional_spend.status is
    'provisional (estimated, not billed yet) or billed (the bill covers the window: billed_through has passed '
    'estimated_through).';
comment on column provisional_spend.billed_cost is
    'billed rows: the effective cost of the run''s usage lines of a day or shorter charged in the window; NULL while '
    'provisional.';
comment on column provisional_spend.error is 'billed rows: estimated_cost - billed_cost; NULL while provisional.';
comment on column provisional_spend.error_pct is
    'billed rows: error / billed_cost x 100, rounded to 10 places; NULL while provisional or when nothing was billed.';
