"""Resource tag snapshots (AWS Resource Groups Tagging API) for attribution step 2."""
