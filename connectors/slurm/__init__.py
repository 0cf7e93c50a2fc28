"""Slurm's accounting records as `sacct --json` writes them: the jobs' allocations.

sacct.py reads the output files of `sacct --json` (Slurm 21.08's `openapi/dbv0.0.37` and
22.05's `dbv0.0.38` shapes, and the `data_parser/v0.0.39`+ shapes of 23.02 and newer, whose
numbers may be `{"set", "infinite", "number"}` objects and whose job state is a list): one
`SacctJob` per job record that got nodes, its host list expanded by python-hostlist. Any
problem is a `SourceError` naming the file, and for a bad job its index, id and field.
"""
