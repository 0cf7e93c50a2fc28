"""Waste assets: the waste analysis of attributed spend."""

from pipelines.attribution.assets import cost_allocations, reconciliation, run_costs, run_registry
from pipelines.ingest.assets import FOCUS_LINE_ITEMS
from pipelines.orchestration.marts import Column, Format, Mart, Preview
from pipelines.plans.assets import budget_baselines
from pipelines.progress.assets import run_events
from pipelines.telemetry.assets import run_utilization
from pipelines.waste.tables import build_waste, waste_inputs, waste_settings

WASTE = Mart(
    name="waste",
    group="waste",
    description="`waste` (and its `waste_by_run` view): what each run's attributed spend bought no training with, "
    "per item, kind and cost category — idle resources after the run's end, recompute after failures, checkpoints "
    "kept beyond the budget, inter-region transfer, repeated experiments, monitoring beyond its estimate, steps "
    "waiting for data and GPUs left idle in hours of low utilization — each "
    "row saying its method. An analysis of attributed spend: cost_allocations and run_costs are read, never "
    "changed, and a run's waste never exceeds its attributed cost. Rebuilt only after reconciliation passed, and "
    "only when its inputs changed.",
    inputs=(FOCUS_LINE_ITEMS, cost_allocations, run_costs, run_registry, budget_baselines, run_events, run_utilization),
    after=(reconciliation,),
    also_writes=("waste_by_run",),
    build=build_waste,
    settings=waste_settings,
    # the periods' allocation digests instead of the allocations' files: sql/ops/waste_inputs.sql
    digest=waste_inputs,
    previews=(
        Preview(
            "by_run",
            ("marts/waste", "summary"),
            (
                Column("training_run", "run"),
                Column("owner", "owner"),
                Column("attributed_cost", "attributed", Format.AMOUNT),
                Column("waste_cost", "waste", Format.AMOUNT),
                Column("waste_share", "share", Format.SHARE),
            ),
        ),
    ),
)
waste = WASTE.asset()
