"""A run's GPU utilization and data-wait share by hour as a Vega-Lite chart, for its report."""

from __future__ import annotations

from collections.abc import Sequence

from pipelines.reports.charts import (
    ACTUAL_COLOR,
    CONFIG,
    DASHED,
    HEIGHT,
    VEGA_LITE_SCHEMA,
    WARNING_COLOR,
    WIDTH,
    ChartSpec,
)
from pipelines.reports.utilization import UTILIZATION_CHART, UtilizationHour


def run_utilization_chart(training_run: str, hours_of_run: Sequence[UtilizationHour]) -> ChartSpec:
    """The run's GPU utilization and data-wait share per UTC hour, as two lines on one 0 to 100 % axis."""
    rows: list[dict[str, object]] = []
    for hour in hours_of_run:
        for series, value in (("GPU utilization", hour.gpu_utilization), ("data wait", hour.data_wait_share)):
            if value is not None:
                rows.append({"hour": f"{hour.hour:%Y-%m-%dT%H:%M:%S}", "series": series, "share": float(value)})
    title = f"GPU utilization and data wait of {training_run} by hour"
    color = {
        "field": "series",
        "type": "nominal",
        "title": None,
        "scale": {"domain": ["GPU utilization", "data wait"], "range": [ACTUAL_COLOR, WARNING_COLOR]},
        "legend": {"orient": "bottom"},
    }
    spec = {
        "$schema": VEGA_LITE_SCHEMA,
        "config": CONFIG,
        "title": {
            "text": title,
            "subtitle": "mean utilization of the run's GPUs, and the share of step time waiting for data, per UTC hour",
            "anchor": "start",
        },
        "width": WIDTH,
        "height": HEIGHT,
        "data": {"values": rows},
        "mark": {"type": "line", "point": True, "strokeWidth": 2},
        "encoding": {
            "x": {"field": "hour", "type": "temporal", "title": "Hour (UTC)", "axis": {"format": "%m-%d %H:%M"}},
            "y": {
                "field": "share",
                "type": "quantitative",
                "title": None,
                "scale": {"domain": [0, 1]},
                "axis": {"format": ".0%"},
            },
            "color": color,
            "strokeDash": {
                "field": "series",
                "type": "nominal",
                "scale": {"domain": ["GPU utilization", "data wait"], "range": [[1, 0], list(DASHED)]},
                "legend": None,
            },
        },
    }
    return ChartSpec(name=UTILIZATION_CHART, title=title, vega_lite=spec)
