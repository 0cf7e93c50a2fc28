-- Each shared cluster per day: its capacity, what jobs held and what stood idle.
create table if not exists cluster_utilization (
    cluster varchar not null,
    day date not null,
    currency varchar,
    capacity_gpu_hours decimal(38, 10) not null,
    allocated_gpu_hours decimal(38, 10) not null,
    idle_gpu_hours decimal(38, 10) not null,
    utilization decimal(38, 10),
    effective_cost decimal(38, 10) not null,
    allocated_cost decimal(38, 10) not null,
    idle_cost decimal(38, 10) not null,
    overhead_cost decimal(38, 10) not null
);

-- What the table and each column hold (read into DuckDB's catalog, the Dagster column schemas and
-- docs/warehouse.md).
comment on table cluster_utilization is
    'Each shared cluster per UTC day and currency, from the allocations of its nodes'' bill lines (and GKE''s '
    'cost allocation lines): the GPU-hours it was billed for, the part jobs held and the part no job held, and '
    'their cost: the cluster''s facts before any sharing (idle capacity shared with runs still counts as idle). '
    'allocated + idle GPU-hours + the system overhead''s = capacity; allocated + idle + overhead cost = '
    'effective_cost. Rebuilt whole when the allocations changed.';
comment on column cluster_utilization.cluster is
    'The cluster (a scheduler source''s cluster:, or the GKE/EKS cluster name).';
comment on column cluster_utilization.day is 'The UTC day of the charges.';
comment on column cluster_utilization.currency is 'Currency of the costs.';
comment on column cluster_utilization.capacity_gpu_hours is 'GPU-hours of the cluster''s nodes billed that day.';
comment on column cluster_utilization.allocated_gpu_hours is
    'GPU-hours jobs held (allocation_method cluster, or GKE''s workloads).';
comment on column cluster_utilization.idle_gpu_hours is
    'GPU-hours no job held (idle_capacity rule unallocated, shared or not).';
comment on column cluster_utilization.utilization is
    'allocated_gpu_hours ÷ capacity_gpu_hours, 0 to 1; NULL when the cluster was billed no GPU-hours that day.';
comment on column cluster_utilization.effective_cost is 'Effective cost of the cluster''s lines that day.';
comment on column cluster_utilization.allocated_cost is 'Effective cost of what jobs held.';
comment on column cluster_utilization.idle_cost is
    'Effective cost of the capacity no job held (rule unallocated), whether or not it was shared with runs.';
comment on column cluster_utilization.overhead_cost is
    'Effective cost of GKE''s system overhead bucket (rule system overhead).';
