"""What to do next (`recommendations`): a run's recommendations, largest saving first, with the
ones left out for missing inputs, and the summary's largest across runs."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal

import duckdb

from pipelines.reports.document import Block, Cell, Paragraph, Table, money, text_cell
from pipelines.warehouse.sql import dict_rows, read_sql

KIND_LABELS = {
    "checkpoint_interval": "checkpoint interval",
    "stop_idle_after_run": "stop idle resources after the run",
    "commit_on_demand_gpus": "commit on-demand GPUs",
    "cold_checkpoints": "colder storage for checkpoints",
    "colocate_data": "keep data in the GPUs' region",
    "low_gpu_utilization": "low GPU utilization",
}
MONTHLY_KINDS = frozenset({"cold_checkpoints"})
"""Kinds whose saving is per month (storage that keeps costing), not over the run."""
SECTION_TITLE = "What to do next"
SAVINGS_NOTE = (
    "Each saving is what the action would have saved over the run, or per 30-day month where marked; "
    "each rests on the figures of its evidence (docs/semantics.md, Recommendations)."
)


@dataclass(frozen=True)
class Recommendation:
    """A row of `recommendations`."""

    training_run: str | None
    cluster: str | None
    kind: str
    estimated_saving: Decimal
    currency: str | None
    evidence: str
    action: str


@dataclass(frozen=True)
class LeftOut:
    """A recommendation left out of a run's for a missing input (`recommendations_left_out`)."""

    kind: str
    reason: str


@dataclass(frozen=True)
class RunRecommendations:
    """A run's recommendations, largest saving first, and those left out."""

    rows: tuple[Recommendation, ...] = ()
    left_out: tuple[LeftOut, ...] = ()


def load_run_recommendations(
    conn: duckdb.DuckDBPyConnection, training_runs: Sequence[str]
) -> dict[str, RunRecommendations]:
    """Each run's recommendations and those left out (every run asked for has an entry)."""
    rows: dict[str, list[Recommendation]] = {training_run: [] for training_run in training_runs}
    left_out: dict[str, list[LeftOut]] = {training_run: [] for training_run in training_runs}
    parameters = {"training_runs": list(training_runs)}
    for row in dict_rows(conn.execute(read_sql("reports/run_recommendations", "rows"), parameters)):
        rows[row["training_run"]].append(Recommendation(**row))
    for row in dict_rows(conn.execute(read_sql("reports/run_recommendations", "left_out"), parameters)):
        left_out[row.pop("training_run")].append(LeftOut(**row))
    return {
        training_run: RunRecommendations(tuple(rows[training_run]), tuple(left_out[training_run]))
        for training_run in training_runs
    }


def load_top_recommendations(conn: duckdb.DuckDBPyConnection) -> list[Recommendation]:
    """The ten largest recommendations across runs."""
    return [Recommendation(**row) for row in dict_rows(conn.execute(read_sql("marts/recommendations", "top")))]


def run_recommendation_blocks(recommended: RunRecommendations) -> tuple[Block, ...]:
    """A run's "What to do next": its recommendations as a table, then why any were left out."""
    blocks: list[Block] = []
    if recommended.rows:
        blocks += [_table(recommended.rows), Paragraph(SAVINGS_NOTE)]
    else:
        blocks.append(Paragraph("Nothing to recommend: no recommendation of the run has a saving above 0."))
    blocks += [
        Paragraph(f"Left out: {KIND_LABELS.get(item.kind, item.kind)}: {item.reason}.") for item in recommended.left_out
    ]
    return tuple(blocks)


def top_recommendation_blocks(
    recommended: Sequence[Recommendation], links: Mapping[str, str | None]
) -> tuple[Block, ...]:
    """The summary's largest recommendations across runs, each run linked to its report."""
    if not recommended:
        return (Paragraph("No run has a recommendation yet."),)
    return (_table(recommended, links=links), Paragraph(SAVINGS_NOTE))


def _saving(recommendation: Recommendation) -> str:
    per = " a month" if recommendation.kind in MONTHLY_KINDS else ""
    return f"{money(recommendation.estimated_saving)} {recommendation.currency or ''}".rstrip() + per


def _table(recommended: Sequence[Recommendation], links: Mapping[str, str | None] | None = None) -> Table:
    """Numbered rows, largest first; with `links`, a first column naming each run (or cluster)."""
    rows = []
    for rank, recommendation in enumerate(recommended, start=1):
        name = recommendation.training_run or f"cluster {recommendation.cluster}"
        subject = () if links is None else (Cell(name, link=links.get(recommendation.training_run or "")),)
        rows.append(
            (
                Cell(str(rank)),
                *subject,
                Cell(KIND_LABELS.get(recommendation.kind, recommendation.kind)),
                Cell(_saving(recommendation)),
                text_cell(recommendation.action),
                text_cell(recommendation.evidence),
            )
        )
    columns = ("#", *(() if links is None else ("Run",)), "Recommendation", "Saving", "Action", "Evidence")
    saving_column = columns.index("Saving")
    return Table(
        columns=columns,
        rows=tuple(rows),
        numeric_columns=frozenset({saving_column}),
        wrapping_columns=frozenset({saving_column + 1, saving_column + 2}),
    )
