"""The deterministic demo data set behind `runledger demo` and `make run`.

`write_demo(root)` writes a complete demo project: `root/runledger.yaml` and, under
`root/.runledger/demo/`, an AWS CUR 2.0 export (Parquet, Data Exports layout), a GCP detailed
billing export (newline-delimited JSON, BigQuery schema), a run registry, three run budgets and two
group budgets (the sweep's, a team's month), a Slurm cluster's accounting (`sacct --json`) with its
node map, and saved Prometheus responses of the 7B run's GPU utilization.
Every call writes the same bytes: one seeded `random.Random`, fixed timestamps, Parquet without
creation times.

The story, October and November 2026:
- `llm-7b-pt-r1` pre-trains on 16 p5.48xlarge (128 H100) on AWS. 14 nodes run under a Compute
  Savings Plan in the last days of its term, 2 were launched by hand, on demand and untagged (the
  registry catches them). It needs more GPU-hours than its budget assumed and ends over budget.
  Its checkpoint bucket is untagged and keeps costing after the run.
- `llm-13b-ft-r2` fine-tunes on 4 p4d.24xlarge under Reserved Instances across the month
  boundary; it stays under budget, while the reservations sit idle the rest of the two months.
- `llm-3b-pt-gcp` pre-trains on 4 a3-highgpu-8g VMs on GCP with committed-use credits, close to
  its estimate.
- `p5-cluster`, a Slurm cluster of 4 p5.48xlarge on AWS, billed on demand and untagged for three
  days in November, shared by a learning-rate sweep (`lr-sweep-1b`, twelve runs and a two-node
  follow-up) and checkpoint evaluations (`eval-7b-ckpts`); only its `sacct --json` accounting
  and node map say who held which GPUs (docs/demo.md checks its figures by hand).
- Untagged spend on both clouds: a shared dev instance, a NAT gateway, a shared dataset bucket,
  CloudWatch API requests, support, tax, a sandbox project.
- A run event log (JSON lines, one file per run) for the waste analysis: `llm-7b-pt-r1` crashes
  twice between checkpoints, finishes training six hours before its nodes are stopped, and
  keeps every checkpoint where its budget planned five; on 2026-10-06 its hourly step timings
  show a morning waiting for data, and its GPUs' DCGM exporter series (saved Prometheus
  responses) an afternoon with half its nodes nearly idle; `llm-3b-pt-gcp` runs cleanly but keeps
  its 45 checkpoints (the budget planned ten) after it ends.

The package, from the story down:
- `story/`: a module per run (`llm_7b`, `llm_13b`, `llm_3b`), one for the shared `p5_cluster`
  and one for `untagged` spend, each building its usage from the clouds' catalogs; the run
  `registry`, the `budgets` and `group_budgets`, and the run `timeline` (checkpoints, event logs).
- `aws/`: the `catalog` (accounts, instance types, products, Savings Plan and RI terms), CUR usage
  `lines`, period `charges` (commitment fees, credit, support, tax), the CUR `columns` and the
  `export` (deliveries, Parquet data files, manifests).
- `slurm/`: the cluster's `sacct --json` output and node map (`export`).
- `prometheus/`: saved `query_range` responses (`export`).
- `gcp/`: the `catalog` (projects, machines, SKUs), export `rows` and the `export` (tax rows,
  NDJSON files per export day).
- shared: `periods` (the calendar), `money` (rounding), `files` (YAML, JSON lines, Parquet) and
  `project` (the demo project's layout and its `runledger.yaml`).
"""

from __future__ import annotations

import random
from datetime import datetime
from pathlib import Path

from pipelines.config_rules import ConfigError
from pipelines.demo.aws.export import write_cur_export
from pipelines.demo.files import write_json_lines, write_yaml
from pipelines.demo.gcp.export import write_gcp_export
from pipelines.demo.project import (
    AWS_EXPORT_FOLDER,
    BUDGETS_FOLDER,
    CONFIG,
    CONFIG_FILE_NAME,
    CONFIG_HEADER,
    DCGM_FILE,
    EARLIER_WAREHOUSE_FILE,
    EVENTS_FOLDER,
    GCP_EXPORT_FOLDER,
    NIGHTLY_RUN_AFTER,
    NODE_MAP_FILE,
    RUNS_FILE,
    SACCT_FILE,
)
from pipelines.demo.prometheus.export import write_query_range
from pipelines.demo.slurm.export import write_node_map, write_sacct_json
from pipelines.demo.story import llm_3b, llm_7b, llm_13b, p5_cluster, untagged
from pipelines.demo.story.budgets import BUDGETS
from pipelines.demo.story.group_budgets import GROUP_BUDGETS
from pipelines.demo.story.registry import RUN_REGISTRY

SEED = 20261003


def write_demo(root: Path, data_end: datetime | None = None) -> Path:
    """Writes the demo project under `root`: config, exports, run registry and budgets.

    Args:
        root: the project folder; created if needed. Data goes under `root/.runledger/demo/`,
            only `runledger.yaml` sits in `root` itself. Existing demo files are overwritten.
        data_end: the project as it stood at this moment (UTC) instead of at the demo's end: the
            exports hold what was billed and exported by then, the event logs what happened by
            then, and freshness is judged the morning after. The story is the same, only cut.

    Returns:
        The path of `root/runledger.yaml`.

    Raises:
        ConfigError: `root/runledger.yaml` exists and was not written by the demo.

    The warehouse file an earlier RunLedger's demo left in `root` is removed: the demo's data is
    rebuilt in the lake.
    """
    config_path = root / CONFIG_FILE_NAME
    if config_path.exists() and not config_path.read_text().startswith(CONFIG_HEADER):
        raise ConfigError(f"{config_path} exists and is not the demo's; choose another folder with --dir")
    # The warehouse file an earlier version of the demo wrote: the demo's own, rebuilt in the lake.
    (root / EARLIER_WAREHOUSE_FILE).unlink(missing_ok=True)
    # Every generator draws from the one `rng` in turn: their order is part of the data set.
    rng = random.Random(SEED)
    aws_usage = llm_7b.cur_lines(rng) + llm_13b.cur_lines(rng) + untagged.aws_lines(rng) + p5_cluster.cur_lines()
    write_cur_export(root / AWS_EXPORT_FOLDER, aws_usage, rng, data_end)
    write_gcp_export(root / GCP_EXPORT_FOLDER, llm_3b.billing_rows(rng) + untagged.gcp_rows(rng), data_end)
    write_yaml(root / RUNS_FILE, {"runs": list(RUN_REGISTRY)})
    for name, budget in (BUDGETS | GROUP_BUDGETS).items():
        write_yaml(root / BUDGETS_FOLDER / f"{name}.yaml", budget)
    for run, events in ((llm_7b.RUN_7B, llm_7b.run_events()), (llm_3b.RUN_3B, llm_3b.run_events())):
        if data_end is not None:
            events = [
                event for event in events if datetime.fromisoformat(event["time"]).replace(tzinfo=None) <= data_end
            ]
        write_json_lines(root / EVENTS_FOLDER / f"{run}.jsonl", events)
    sacct_taken_at = p5_cluster.SACCT_TAKEN_AT if data_end is None else min(p5_cluster.SACCT_TAKEN_AT, data_end)
    write_sacct_json(root / SACCT_FILE, p5_cluster.JOBS, sacct_taken_at)
    write_node_map(root / NODE_MAP_FILE, p5_cluster.node_map())
    write_query_range(root / DCGM_FILE, llm_7b.gpu_utilization_series(), data_end)
    config = CONFIG
    if data_end is not None:
        config = CONFIG | {"orchestration": {"freshness_as_of": f"{data_end + NIGHTLY_RUN_AFTER:%Y-%m-%dT%H:%M:%SZ}"}}
    write_yaml(config_path, config, header=CONFIG_HEADER)
    return config_path
