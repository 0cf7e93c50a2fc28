"""Prometheus range queries: a query over a time range at a step gives series, each its labels and
its (time, value) samples.

Two clients answer the same `query_range(query, start, end, step_seconds)`:

- `HttpPrometheus(url, timeout)` asks a server's HTTP API (`GET /api/v1/query_range`), splitting a
  long range so that no request exceeds Prometheus's 11,000 points per series;
- `SavedPrometheus(folder)` answers series selectors (`metric{label="value",...}`) from saved
  `query_range` responses, one metric's in `<metric>.json` or `<metric>.<part>.json` files (see
  `saved.py`).

The connector knows queries and series, nothing of what they measure. Every failure is a
`SourceError` naming the server or file and the query.
"""

from connectors.prometheus.http import MAX_POINTS_PER_SERIES, HttpPrometheus
from connectors.prometheus.saved import SavedPrometheus
from connectors.prometheus.series import PrometheusClient, Series

__all__ = ["MAX_POINTS_PER_SERIES", "HttpPrometheus", "PrometheusClient", "SavedPrometheus", "Series"]
