"""The two group budgets (`budgets/<name>.yaml` with `scope:`): one for Dana's learning-rate sweep,
one month by month for the ml-platform team.

- `lr-sweep-1b`: Dana planned twelve trials at about 4 H100 for 18 hours each, 864 GPU-hours at
  the p5's on-demand 6.88 per GPU-hour (5,944.32), and budgeted the sweep's three days on
  `p5-cluster` at 6,000. The grid itself took 732.5 GPU-hours (a failed trial and a requeued one
  included), but the follow-up run of the best rate on two whole nodes for 18 hours (288
  GPU-hours, 1,981.44) was never budgeted: the sweep ends at 7,021.04, over its budget, the
  unbounded hyperparameter search cost practice warns about. Its warning and over alerts are
  genuine.
- `ml-platform`: the team that owns the GCP projects (their `team` label) budgets 3,000 a month
  for what the projects carry beyond the runs' own spend (tax, network, monitoring, the sandbox).
  October reaches 2,282.30 (76 %) and November about 1,000: no alert.
"""

from __future__ import annotations

from datetime import date

from pipelines.demo.story.p5_cluster import SWEEP_EXPERIMENT

TEAM_OWNER = "ml-platform"

GROUP_BUDGETS = {
    SWEEP_EXPERIMENT: {
        "scope": {"experiment": SWEEP_EXPERIMENT},
        "currency": "USD",
        "window": {"start": date(2026, 11, 17), "end": date(2026, 11, 20)},
        "amount": {"compute": 6000},
        "thresholds": {"warning": 0.8, "over": 1.0},
    },
    f"team-{TEAM_OWNER}": {
        "scope": {"owner": TEAM_OWNER},
        "currency": "USD",
        "period": "monthly",
        "from": "2026-10",
        "amount": 3000,
        "thresholds": {"warning": 0.8, "over": 1.0},
    },
}
"""Each group budget by its file's name."""
