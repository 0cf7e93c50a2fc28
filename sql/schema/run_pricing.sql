-- GPU-hours and their cost per run and pricing type: the unit economics of the compute bought.
create table if not exists run_pricing (
    training_run varchar not null,
    pricing varchar not null,        -- on_demand | savings_plan | reservation | committed_use | spot
                                     -- | committed | other
    currency varchar,
    gpu_hours decimal(38, 10) not null,
    effective_cost decimal(38, 10) not null,
    resources bigint,
    cost_per_gpu_hour decimal(38, 10),
    gpu_hours_share decimal(38, 10)
);

-- warehouses created before these columns existed
alter table run_pricing add column if not exists resources bigint;

-- What the table and each column hold (read into DuckDB's catalog, the Dagster column schemas and
-- docs/warehouse.md).
comment on table run_pricing is
    'The GPU-hours attributed to each run by how they were priced (cost_allocations joined to the PricingCategory '
    'and CommitmentDiscountType of their focus_line_items): effective cost per GPU-hour and share of the run''s '
    'GPU-hours. Only allocations with GPU-hours count. Rebuilt whole every run with run_progress.';
comment on column run_pricing.training_run is 'The run.';
comment on column run_pricing.pricing is
    'savings_plan, reservation or committed_use (the line''s CommitmentDiscountType), spot (PricingCategory '
    'Dynamic), on_demand (Standard), committed (Committed without a commitment type) or other.';
comment on column run_pricing.currency is 'The billing currency.';
comment on column run_pricing.gpu_hours is 'GPU-hours of the run priced this way.';
comment on column run_pricing.effective_cost is 'Their effective cost.';
comment on column run_pricing.resources is 'Distinct resources (ResourceId) with GPU-hours priced this way.';
comment on column run_pricing.cost_per_gpu_hour is 'effective_cost / gpu_hours; NULL when gpu_hours is 0.';
comment on column run_pricing.gpu_hours_share is
    'gpu_hours / the run''s GPU-hours in the currency: the shares of a run add up to 1 up to the 10th decimal.';
