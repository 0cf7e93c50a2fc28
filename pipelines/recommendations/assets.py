"""Recommendation assets: what to do next for each run, largest saving first."""

from pipelines.attribution.assets import cost_allocations, reconciliation, run_costs, run_registry
from pipelines.ingest.assets import FOCUS_LINE_ITEMS
from pipelines.orchestration.marts import Column, Format, Mart, Preview, reads
from pipelines.plans.assets import budget_baselines
from pipelines.progress.assets import run_events, run_progress
from pipelines.recommendations.tables import PRICE_RATIOS_FILE, build_recommendations
from pipelines.telemetry.assets import run_utilization
from pipelines.waste.assets import waste

RECOMMENDATIONS = Mart(
    name="recommendations",
    group="recommendations",
    description="`recommendations` (and `recommendations_left_out`): what to do next for each run, with the saving "
    "each action would have brought — the Young/Daly checkpoint interval, stopping what idles after the run, "
    "committing on-demand GPUs, moving checkpoints to a colder storage class, keeping data in the GPUs' region and "
    "fixing low GPU utilization — each with its evidence; and why a recommendation whose inputs are missing was "
    "left out. Rebuilt whole after the waste analysis, only when a table it reads or the checkpoint globs changed.",
    inputs=(
        FOCUS_LINE_ITEMS,
        cost_allocations,
        run_costs,
        run_registry,
        budget_baselines,
        run_events,
        reads(run_progress, "run_pricing", "run_progress"),
        run_utilization,
        waste,
    ),
    after=(reconciliation,),
    also_writes=("recommendations_left_out",),
    build=build_recommendations,
    settings=lambda config: config.waste,
    parameters=lambda settings: {
        "checkpoint_resources": [pattern.lower() for pattern in settings.checkpoint_resources],
        "price_ratios": PRICE_RATIOS_FILE.read_text(),
    },
    previews=(
        Preview(
            "top",
            ("marts/recommendations", "top"),
            (
                Column("training_run", "run"),
                Column("kind", "kind"),
                Column("estimated_saving", "saving", Format.AMOUNT, unit="currency"),
                Column("action", "action"),
            ),
        ),
    ),
)
recommendations = RECOMMENDATIONS.asset()
