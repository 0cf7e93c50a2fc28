"""`make run` as a newcomer runs it: the demo's nightly job, recorded in the Dagster instance that
`make dev` shows (its `DAGSTER_HOME`, holding the repo's dagster.yaml), so the UI's assets are
materialized, every billing period of them."""

import subprocess
from pathlib import Path

import dagster as dg

from pipelines.definitions import build_definitions
from pipelines.maintenance.assets import lake_maintenance
from tests.support import REPO


def test_make_run_records_every_asset_in_the_instance_make_dev_shows(tmp_path: Path) -> None:
    home = tmp_path / "dagster_home"
    project = tmp_path / "project"
    done = subprocess.run(
        ["make", "--no-print-directory", "run", f"DEMO_DIR={project}", f"DAGSTER_HOME_DIR={home}"],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=False,
        timeout=900,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "reconciliation: 4 source periods, all differences 0" in done.stderr
    assert (home / "dagster.yaml").read_text() == (REPO / "pipelines" / "orchestration" / "dagster.yaml").read_text()

    defs = build_definitions(project / "runledger.yaml")
    graph = defs.resolve_asset_graph()
    keys = graph.get_all_asset_keys() - {lake_maintenance.key}
    with dg.DagsterInstance.from_config(str(home)) as instance:
        never = sorted(key.to_user_string() for key in keys if instance.get_latest_materialization_event(key) is None)
        partitions = {
            key.to_user_string(): instance.get_materialized_partitions(key)
            for key in keys
            if graph.get(key).partitions_def is not None
        }
        assert instance.get_concurrency_config().pool_config.default_pool_limit == 2
        # runs of the nightly job, as the UI lists them: its inputs, each billing period, the rest
        runs = sorted(
            (run.job_name, run.tags.get("dagster/partition", ""), run.tags.get("runledger/warehouse"))
            for run in instance.get_runs()
        )
    assert runs == [
        ("runledger_nightly", "", "writer"),
        ("runledger_nightly", "", "writer"),
        ("runledger_nightly", "2026-10-01", "writer"),
        ("runledger_nightly", "2026-11-01", "writer"),
    ]
    assert never == []
    assert partitions and all(p == {"2026-10-01", "2026-11-01"} for p in partitions.values()), partitions
