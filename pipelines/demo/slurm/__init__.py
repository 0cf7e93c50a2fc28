"""The demo's Slurm accounting: `sacct --json` output (Slurm 22.05) and the node map of its cluster."""
