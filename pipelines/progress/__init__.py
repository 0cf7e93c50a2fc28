"""Training progress: the run event log, each run's progress and unit economics, and its spend not billed yet."""
