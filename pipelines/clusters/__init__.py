"""Shared clusters: the scheduler sources' usage intervals (`cluster_usage`) and what the bill's
split of them shows (`cluster_utilization`, `run_cluster_share`)."""
