"""Utilization telemetry: GPU utilization and data-wait timings joined to runs; never cost."""
