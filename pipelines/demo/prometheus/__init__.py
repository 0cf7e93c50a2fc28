"""The demo's saved Prometheus responses (NVIDIA DCGM exporter series)."""
