"""`slurm`: a Slurm cluster's job allocations from `sacct --json` output files, not billing.

settings.py (`SlurmSource`), reader.py (`read_intervals`: the jobs' usage intervals, their
labels from `run_from`, and the node map). The files are read by `connectors/slurm/`.
"""

from pipelines.sources.kind import SourceKind, deferred
from pipelines.sources.slurm.settings import SlurmSource

KIND = SourceKind(
    name="slurm",
    settings=SlurmSource,
    description="a Slurm cluster's job allocations (`sacct --json` files): one usage interval per job run "
    "and node in `cluster_usage`",
    intervals=deferred("pipelines.sources.slurm.reader", "read_intervals"),
)
