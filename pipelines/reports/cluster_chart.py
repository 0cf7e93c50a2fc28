"""A shared cluster's utilization by day as a Vega-Lite chart, for the summary report."""

from __future__ import annotations

from pipelines.reports.charts import ACTUAL_COLOR, CONFIG, HEIGHT, VALUE_LABEL, VEGA_LITE_SCHEMA, WIDTH, ChartSpec
from pipelines.reports.clusters import ClusterReport
from pipelines.reports.document import percent


def utilization_chart(cluster: ClusterReport) -> ChartSpec:
    """The cluster's utilization per UTC day as bars, labelled with their percentage."""
    rows: list[dict[str, object]] = [
        {
            "day": f"{day.day:%Y-%m-%d}",
            "utilization": float(day.utilization or 0),
            "label": percent(day.utilization),
        }
        for day in cluster.days
    ]
    title = f"Utilization of {cluster.cluster} by day"
    x = {"field": "day", "type": "ordinal", "title": "Day (UTC)", "axis": {"labelAngle": 0}}
    y = {
        "field": "utilization",
        "type": "quantitative",
        "title": "Utilization",
        "scale": {"domain": [0, 1]},
        "axis": {"format": ".0%"},
    }
    spec = {
        "$schema": VEGA_LITE_SCHEMA,
        "config": CONFIG,
        "title": {
            "text": title,
            "subtitle": "GPU-hours held by jobs ÷ GPU-hours of the nodes, per UTC day",
            "anchor": "start",
        },
        "width": WIDTH,
        "height": HEIGHT,
        "data": {"values": rows},
        "layer": [
            {"mark": {"type": "bar", "color": ACTUAL_COLOR}, "encoding": {"x": x, "y": y}},
            {
                "mark": {**VALUE_LABEL, "baseline": "bottom", "dy": -3},
                "encoding": {"x": x, "y": y, "text": {"field": "label", "type": "nominal"}},
            },
        ],
    }
    return ChartSpec(name=cluster.chart_name, title=title, vega_lite=spec)
