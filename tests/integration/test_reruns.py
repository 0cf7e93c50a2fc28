"""A night with nothing new: every step whose inputs are unchanged keeps what it built (its
`step_inputs` record stays as it was), every check whose inputs are unchanged shows its last
result, and a changed input rebuilds the tables computed from it, with the new numbers; the
reports are read again only when the lake changed, and redrawn only where their figures did."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path

import pytest
import yaml

from pipelines.config import load_config
from pipelines.definitions import build_asset_graph
from pipelines.nightly import run_nightly
from pipelines.orchestration.tables import INPUTS_METADATA_KEY
from pipelines.reports import write_reports, writer
from pipelines.warehouse.catalog import warehouse_catalog
from tests.support.demo_lake import SharedDemo, copy_demo, copy_demo_inputs
from tests.support.lake import reading, writing

# The steps that keep their build while the files of the tables they read are the same, and the
# inputs replaced whole that are not written again when their rows are the same.
TABLE_STEPS = (
    "run_costs",
    "unattributed_costs",
    "budget_variance",
    "group_budget_variance",
    "budget_alerts",
    "run_progress",
    "provisional_spend",
    "commitment_utilization",
    "variance_causes",
    "cluster_utilization",
    "run_cluster_share",
    "run_utilization",
    "run_costs_fully_loaded",
    "recommendations",
)
# The checks that run only when what they read changed, showing their last result meanwhile.
CHECK_STEPS = ("reconciliation", "unattributed_costs.untagged_share")
ROW_STEPS = ("run_registry", "budget_baselines", "group_budgets", "run_events", "cluster_usage", "gpu_utilization")
KEPT_TABLES = {
    "run_costs": "training_run, cost_category, billing_period, currency",
    "unattributed_costs": "all",
    "budget_variance": "training_run, cost_category",
    "group_budget_variance": "all",
    "budget_alerts": "all",
    "run_progress": "training_run",
    "run_pricing": "all",
    "provisional_spend": "all",
    "commitment_utilization": "all",
    "variance_causes": "all",
    "cluster_utilization": "all",
    "run_cluster_share": "all",
    "run_costs_fully_loaded": "all",
    "cluster_intervals": "all",
    "gpu_utilization": "all",
    "run_utilization": "all",
    "waste": "all",
    "recommendations": "all",
    "recommendations_left_out": "all",
    "budget_baselines": "training_run, cost_category",
    "group_budgets": "all",
    "run_events": "all",
    "run_registry": "training_run",
}
GCP_SOURCE = "- name: gcp-main\n  kind: gcp_billing\n  path: .runledger/demo/gcp\n"


@pytest.fixture(scope="module")
def project(shared_demo: SharedDemo, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo project without its GCP source (its files name no delivery, so every night
    reloads them: a night with nothing new needs sources that say what they delivered), after
    its first night."""
    config = copy_demo_inputs(shared_demo, tmp_path_factory.mktemp("reruns"))
    assert GCP_SOURCE in config.read_text()
    config.write_text(config.read_text().replace(GCP_SOURCE, ""))
    run_nightly(config, echo=lambda line: None)
    return config


def query(config: Path, sql: str) -> list[tuple]:
    with reading(config) as conn:
        return conn.execute(sql).fetchall()


def recorded(config: Path) -> dict[str, tuple]:
    """Each step's step_inputs record of its whole build: (digest, recorded_at)."""
    rows = query(config, "select step, inputs_digest, recorded_at from step_inputs where partition_key = ''")
    return {step: (digest, at) for step, digest, at in rows}


def contents(config: Path) -> dict[str, list[tuple]]:
    return {table: query(config, f"select * from {table} order by {order}") for table, order in KEPT_TABLES.items()}


def test_a_night_with_nothing_new_keeps_every_table_and_skips_each_step(project: Path) -> None:
    before_records, before = recorded(project), contents(project)
    assert set(before_records) >= {*TABLE_STEPS, *ROW_STEPS, *CHECK_STEPS, "waste"}
    assert all(
        before[table]
        for table in ("budget_variance", "group_budget_variance", "budget_alerts", "run_progress", "run_events")
    )
    lines: list[str] = []

    run_nightly(project, echo=lines.append)

    assert recorded(project) == before_records, "no step rebuilt, no check ran: every record is the previous night's"
    assert contents(project) == before
    # the reconciliation that did not run says what the last one found
    assert "  reconciliation: 2 source periods, all differences 0" in [line.split(" ", 1)[1] for line in lines]


def test_a_revised_budget_rebuilds_the_tables_it_feeds(project: Path) -> None:
    budget_file = project.parent / ".runledger" / "demo" / "budgets" / "llm-13b-ft-r2.yaml"
    budget = yaml.safe_load(budget_file.read_text())
    before_records = recorded(project)
    ((estimated,),) = query(
        project,
        "select estimated_cost from budget_variance where training_run = 'llm-13b-ft-r2' and cost_category = 'total'",
    )
    budget["fixed"]["monitoring"] += 100
    budget_file.write_text(yaml.safe_dump(budget, sort_keys=False))

    run_nightly(project, echo=lambda line: None)

    ((revised, actual, variance),) = query(
        project,
        "select estimated_cost, actual_cost, variance from budget_variance "
        "where training_run = 'llm-13b-ft-r2' and cost_category = 'total'",
    )
    assert revised == estimated + Decimal(100)
    assert variance == actual - revised
    ((causes_total,),) = query(
        project, "select sum(amount) from variance_causes where training_run = 'llm-13b-ft-r2' and parent = 'total'"
    )
    assert causes_total == variance, "variance_causes was rebuilt from the new variance"
    after_records = recorded(project)
    rebuilt = {step for step in after_records if after_records[step] != before_records.get(step)}
    # the budget feeds the baselines and everything computed from them; the allocations, the
    # events and what only they feed stay
    assert rebuilt >= {"budget_baselines", "budget_variance", "budget_alerts", "run_progress", "variance_causes"}
    assert rebuilt.isdisjoint({"run_registry", "run_events", "commitment_utilization", "provisional_spend"})


def test_a_new_run_event_rebuilds_the_tables_it_feeds(project: Path) -> None:
    events_file = project.parent / ".runledger" / "demo" / "events" / "llm-7b-pt-r1.jsonl"
    lines = events_file.read_text().splitlines()
    end = json.loads(lines[-1])
    assert end["event"] == "end"
    checkpoint = {**end, "event": "checkpoint", "time": "2026-10-10T18:00:00Z", "step": end["step"] + 4980}
    later_end = {**checkpoint, "event": "end"}
    events_file.write_text("\n".join([*lines[:-1], json.dumps(checkpoint), json.dumps(later_end)]) + "\n")
    before_records = recorded(project)
    ((wall_clock,),) = query(project, "select wall_clock_hours from run_progress where training_run = 'llm-7b-pt-r1'")

    run_nightly(project, echo=lambda line: None)

    ((last_step, later_wall_clock),) = query(
        project, "select last_step, wall_clock_hours from run_progress where training_run = 'llm-7b-pt-r1'"
    )
    assert last_step == end["step"] + 4980
    assert later_wall_clock == wall_clock + 6
    after_records = recorded(project)
    rebuilt = {step for step in after_records if after_records[step] != before_records.get(step)}
    assert rebuilt >= {"run_events", "run_progress", "budget_variance", "budget_alerts", "provisional_spend"}
    assert rebuilt.isdisjoint({"run_registry", "budget_baselines", "commitment_utilization"})


def test_each_kept_step_digests_tables_not_views(project: Path) -> None:
    """A view has no files: a step reading one names the view's tables (the orchestration test
    proves they are every table the step reads)."""
    graph = build_asset_graph(load_config(project))
    declared = {
        spec.key.to_user_string(): spec.metadata[INPUTS_METADATA_KEY].value
        for asset in graph.assets
        for spec in asset.specs
        if INPUTS_METADATA_KEY in spec.metadata
    }
    assert set(declared) == set(TABLE_STEPS)
    catalog = warehouse_catalog()
    assert {catalog[table].kind for inputs in declared.values() for table in inputs} == {"table"}


def test_reports_are_read_again_only_when_the_lake_changed_and_redrawn_only_where_figures_did(
    shared_demo: SharedDemo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = copy_demo(shared_demo, tmp_path / "demo")
    out = load_config(config).reports_path
    (out / writer.REPORT_SET_FILE).unlink()
    with reading(config) as conn:
        first = write_reports(conn, out)
    assert first.rendered_line == "rendered 0 of 17 run reports, 17 unchanged", "the demo night's reports stand"

    def unread(*args: object) -> None:
        raise AssertionError("the reports were read again with the lake unchanged")

    with monkeypatch.context() as patch, reading(config) as conn:
        patch.setattr(writer, "load_overviews", unread)
        assert write_reports(conn, out).rendered_line == "rendered 0 of 17 run reports, 17 unchanged"

    # one line of the 13B run costs a dollar more, in the bill and in its allocation: conservation
    # holds, the other runs' figures are the same
    with writing(config) as conn:
        ((key,),) = conn.execute(
            "select x_LineItemKey from cost_allocations where training_run = 'llm-13b-ft-r2' "
            "and allocation_method = 'tag' order by x_LineItemKey limit 1"
        ).fetchall()
        conn.execute("update focus_line_items set EffectiveCost = EffectiveCost + 1 where x_LineItemKey = ?", [key])
        conn.execute("update cost_allocations set effective_cost = effective_cost + 1 where x_LineItemKey = ?", [key])
    with reading(config) as conn:
        changed = write_reports(conn, out)
    assert changed.rendered == ("llm-13b-ft-r2",)
    assert changed.rendered_line == "rendered 1 of 17 run reports, 16 unchanged"
