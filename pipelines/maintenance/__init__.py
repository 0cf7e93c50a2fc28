"""The lake's weekly upkeep: snapshots past their retention expired, small files compacted."""
