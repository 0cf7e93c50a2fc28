"""The kinds of source `sources:` can name, one folder each (`pipelines/sources/<kind>/`), listed in
`registry.py`, and what the billing kinds share: reader protocols and file rules (`base.py`), a
delivery as DuckDB maps it (`delivery.py`), the mapping tables (`mappings.py`), schema drift
(`drift.py`) and the FOCUS files' reading and mapping (`focus_files.py`, `focus_mapping.sql`,
`focus_totals.sql`). docs/architecture.md, "Adding a source kind", says what a kind's folder holds.
"""
