"""The report charts as Vega-Lite specifications, rendered offline.

The specifications are plain dicts: building them through altair's schema classes cost about
0.1 s of CPU per chart (validation and deep copies at every step), as much as rendering it, and
the report parent builds about 1,100 charts for 200 runs. The tests validate every chart the
reports draw against the Vega-Lite schema.
Data is inline in every specification, so `pipelines.reports.chart_rendering` renders them without a
network.
Amounts arrive as exact `Decimal`s and become floats only here, for drawing.
"""

from __future__ import annotations

import math
import textwrap
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import date, timedelta
from decimal import Decimal
from typing import Any

from pipelines.reports.data import CostLine, DailySpend, RunHeader, RunResource, WasteKind
from pipelines.sources.mappings import COST_CATEGORIES

VEGA_LITE_SCHEMA = "https://vega.github.io/schema/vega-lite/v6.4.1.json"
WIDTH = 560
HEIGHT = 230
DAILY_TICKS_UP_TO_DAYS = 12
MAX_WEEKLY_TICKS = 8
FONT = "Helvetica, Arial, sans-serif"
COMPACT_FORMAT = ".3~s"
TOTAL_KIND = "Estimate / actual"
WATERFALL_LABEL_WIDTH = 11
# the waterfall grows wider than WIDTH beyond 8 steps, so that its wrapped labels never overlap
WATERFALL_STEP_WIDTH = 70
RESOURCE_LABEL_CHARACTERS = 36
NO_RESOURCE_ID = "(no resource id)"

CATEGORY_ORDER = COST_CATEGORIES
CATEGORY_COLORS = (
    "#4c78a8", "#f58518", "#54a24b", "#b279a2", "#72b7b2", "#eeca3b", "#9d755d", "#bab0ac",
    "#e45756", "#ff9da6", "#79706e", "#d67195", "#17becf", "#8c6d31",
    "#393b79", "#637939", "#843c39", "#7b4173",
)  # fmt: skip

ESTIMATE_COLOR = "#a3acb9"
ACTUAL_COLOR = "#2f5d8c"
INCREASE_COLOR = "#d9534f"
DECREASE_COLOR = "#3c9a5f"
PLANNED_COLOR = "#6b7280"
FORECAST_COLOR = "#7c3aed"
BUDGET_COLOR = "#111827"
WARNING_COLOR = "#e69b00"
OVER_COLOR = "#c0392b"

SOLID = (1, 0)
DASHED = (6, 4)
DOTTED = (2, 3)
DASH_DOT = (8, 3, 2, 3)

CONFIG = {
    "font": FONT,
    "background": "white",
    "title": {"fontSize": 15, "subtitleFontSize": 11, "subtitleColor": "#4b5563", "offset": 10},
    "axis": {"labelFontSize": 11, "titleFontSize": 12, "titleColor": "#374151", "gridColor": "#eceff3"},
    "legend": {"labelFontSize": 11, "titleFontSize": 11, "symbolStrokeWidth": 2},
    "view": {"stroke": None},
}
VALUE_LABEL = {"type": "text", "fontSize": 10, "color": "#374151"}


@dataclass(frozen=True)
class ChartSpec:
    """A chart ready to render.

    Attributes:
        name: file stem of the chart's PNG, e.g. `cumulative_spend`.
        title: the chart's title.
        vega_lite: the chart's Vega-Lite specification, data inline, for `render_chart`.
    """

    name: str
    title: str
    vega_lite: dict[str, Any]


@dataclass(frozen=True)
class _Series:
    label: str
    color: str
    dash: tuple[int, ...]


def ordered_categories(categories: Iterable[str]) -> list[str]:
    """Sorts cost categories in the product's usual order, unknown ones last alphabetically."""
    known = {name: index for index, name in enumerate(CATEGORY_ORDER)}
    return sorted(set(categories), key=lambda name: (known.get(name, len(known)), name))


def _category_scale(categories: Sequence[str]) -> dict[str, Any]:
    ordered = ordered_categories(categories)
    palette = [CATEGORY_COLORS[CATEGORY_ORDER.index(name)] if name in CATEGORY_ORDER else None for name in ordered]
    spare = iter(CATEGORY_COLORS[len(CATEGORY_ORDER) :] * len(ordered))
    return {"domain": ordered, "range": [color or next(spare) for color in palette]}


def _styled(view: dict[str, Any], rows: list[dict[str, Any]], title: str, subtitle: str) -> dict[str, Any]:
    """A top-level specification: the view (a mark and encoding, or layers) over the rows."""
    return {
        "$schema": VEGA_LITE_SCHEMA,
        "config": CONFIG,
        "title": {"text": title, "subtitle": subtitle, "anchor": "start"},
        "width": WIDTH,
        "height": HEIGHT,
        "data": {"values": rows},
        **view,
    }


def _field(name: str, field_type: str, **properties: Any) -> dict[str, Any]:
    return {"field": name, "type": field_type, **properties}


def _money_axis(currency: str, title: str = "Spend") -> dict[str, Any]:
    """A money axis of at most about 6 ticks: more, and the last labels, flush with the axis end,
    run into each other (`10,00011,000`)."""
    return {"title": f"{title} ({currency})", "format": ",.0f", "tickCount": 6}


def _bottom_legend(**properties: Any) -> dict[str, Any]:
    return {"title": None, "orient": "bottom", **properties}


def _day_axis(days: Sequence[str]) -> dict[str, Any]:
    """A UTC day axis with ticks on midnights: daily for short spans, else on Sundays."""
    span = (date.fromisoformat(max(days)[:10]) - date.fromisoformat(min(days)[:10])).days if days else 0
    if span <= DAILY_TICKS_UP_TO_DAYS:
        ticks = {"interval": "day", "step": 1}
    else:
        ticks = {"interval": "week", "step": math.ceil(span / 7 / MAX_WEEKLY_TICKS)}
    return {"title": "Charge day (UTC)", "format": "%b %d", "labelAngle": 0, "tickCount": ticks}


def cumulative_spend_chart(header: RunHeader, total: CostLine, daily: Sequence[DailySpend], currency: str) -> ChartSpec:
    """Cumulative effective spend by day against the budget, its thresholds, a planned burn and
    the forecast.

    Each actual point is the spend up to the end of that charge day. The planned burn is linear
    from nothing at the run's start to the whole estimate after the estimate's wall-clock; the forecast runs from
    the spend so far at the data's as-of to the forecast at completion at the window's end.
    """
    actual = _Series("Actual (cumulative)", ACTUAL_COLOR, SOLID)
    planned = _Series("Planned burn", PLANNED_COLOR, DASHED)
    forecast = _Series("Forecast at completion", FORECAST_COLOR, DASH_DOT)
    planned_points = _planned_burn(header, total)
    forecast_points = _forecast(header, total)
    series = [actual]
    actual_points = _cumulative_points(daily)
    if forecast_points and actual_points and actual_points[-1]["day"] < forecast_points[0]["day"]:
        actual_points.append(dict(forecast_points[0]))  # flat up to as-of, where the forecast starts
    rows = [dict(point, series=actual.label) for point in actual_points]
    for line, points in ((planned, planned_points), (forecast, forecast_points)):
        if points:
            series.append(line)
            rows += [dict(point, series=line.label) for point in points]
    days = sorted(row["day"] for row in rows)
    levels = _budget_levels(header, total) if days else []
    for level, amount in levels:
        series.append(level)
        rows += [{"day": day, "spend": amount, "series": level.label} for day in (days[0], days[-1])]
    domain = [item.label for item in series]
    lines = {
        "mark": {"type": "line", "strokeWidth": 2},
        "encoding": {
            "x": _field("day", "temporal", scale={"type": "utc"}, axis=_day_axis(days)),
            "y": _field("spend", "quantitative", axis=_money_axis(currency)),
            "color": _field(
                "series", "nominal",
                scale={"domain": domain, "range": [item.color for item in series]},
                legend=_bottom_legend(columns=2, labelLimit=320),
            ),
            "strokeDash": _field(
                "series", "nominal", scale={"domain": domain, "range": [list(item.dash) for item in series]}
            ),
        },
    }  # fmt: skip
    dots = {
        "mark": {"type": "point", "filled": True, "size": 28, "color": ACTUAL_COLOR},
        "encoding": {"x": _field("day", "temporal"), "y": _field("spend", "quantitative")},
        "transform": [{"filter": {"field": "series", "equal": actual.label}}],
    }
    title = "Cumulative spend against budget" if levels else "Cumulative spend"
    subtitle = f"Effective cost in {currency}, cumulative to the end of each charge day (UTC)"
    if not levels:
        subtitle += "; no budget"
    return ChartSpec("cumulative_spend", title, _styled({"layer": [lines, dots]}, rows, title, subtitle))


def _cumulative_points(daily: Sequence[DailySpend]) -> list[dict[str, Any]]:
    per_day: dict[date, Decimal] = {}
    for spend in daily:
        per_day[spend.charge_day] = per_day.get(spend.charge_day, Decimal(0)) + spend.effective_cost
    if not per_day:
        return []
    first, last = min(per_day), max(per_day)
    points = [{"day": first.isoformat(), "spend": 0.0}]
    running = Decimal(0)
    for offset in range((last - first).days + 1):
        day = first + timedelta(days=offset)
        running += per_day.get(day, Decimal(0))
        points.append({"day": (day + timedelta(days=1)).isoformat(), "spend": float(running)})
    return points


def _planned_burn(header: RunHeader, total: CostLine) -> list[dict[str, Any]]:
    """Nothing to the whole estimate over the estimate's wall-clock from the run's start, else
    over the budget window (a budget without a model)."""
    if total.estimated_cost is None:
        return []
    if header.planned_start is not None and header.planned_wall_clock_hours is not None:
        end = header.planned_start + timedelta(hours=float(header.planned_wall_clock_hours))
        return [
            {"day": f"{header.planned_start.isoformat()}Z", "spend": 0.0},
            {"day": f"{end.isoformat()}Z", "spend": float(total.estimated_cost)},
        ]
    if header.window_start is None or header.window_end is None:
        return []
    return [
        {"day": header.window_start.isoformat(), "spend": 0.0},
        {"day": header.window_end.isoformat(), "spend": float(total.estimated_cost)},
    ]


def _forecast(header: RunHeader, total: CostLine) -> list[dict[str, Any]]:
    """From the spend so far at as-of to the forecast at completion at the window's end."""
    if (
        header.as_of is None
        or header.window_end is None
        or total.forecast_at_completion is None
        or header.as_of.date() >= header.window_end
    ):
        return []
    return [
        {"day": f"{header.as_of.isoformat()}Z", "spend": float(total.actual_cost)},
        {"day": header.window_end.isoformat(), "spend": float(total.forecast_at_completion)},
    ]


def _budget_levels(header: RunHeader, total: CostLine) -> list[tuple[_Series, float]]:
    """The horizontal lines: budget, warning and over; levels at the same amount share a line."""
    if total.estimated_cost is None:
        return []
    fractions = [("budget", Decimal(1), BUDGET_COLOR)]
    if header.warning_threshold is not None:
        fractions.append(("warning threshold", header.warning_threshold, WARNING_COLOR))
    if header.over_threshold is not None:
        fractions.append(("over threshold", header.over_threshold, OVER_COLOR))
    merged: dict[Decimal, list[tuple[str, str]]] = {}
    for name, fraction, color in fractions:
        merged.setdefault(fraction, []).append((name, color))
    levels = []
    for fraction, names in merged.items():
        label = " = ".join(name for name, _ in names).capitalize()
        label += f" ({fraction * 100:.0f} % of estimate)"
        dash = SOLID if names[0][0] == "budget" else DOTTED
        series = _Series(label, names[-1][1], dash)
        levels.append((series, float(total.estimated_cost * fraction)))
    return levels


def estimate_vs_actual_chart(categories: Sequence[CostLine], currency: str, *, has_budget: bool) -> ChartSpec:
    """Grouped bars of estimated and actual cost per category; actual only without a budget."""
    order = ordered_categories(line.cost_category for line in categories)
    rows = [
        {"category": line.cost_category, "measure": "Actual", "amount": float(line.actual_cost)} for line in categories
    ]
    if has_budget:
        rows += [
            {"category": line.cost_category, "measure": "Estimate", "amount": float(line.estimated_cost)}
            for line in categories
            if line.estimated_cost is not None
        ]
    measures = ["Estimate", "Actual"] if has_budget else ["Actual"]
    colors = [ESTIMATE_COLOR, ACTUAL_COLOR] if has_budget else [ACTUAL_COLOR]
    base = {
        "x": _field("category", "nominal", sort=order, axis={"title": "Cost category", "labelAngle": 0}),
        "xOffset": _field("measure", "nominal", sort=measures),
        "y": _field("amount", "quantitative", axis=_money_axis(currency)),
    }
    bars = {
        "mark": {"type": "bar", "cornerRadiusTopLeft": 2, "cornerRadiusTopRight": 2},
        "encoding": base | {
            "color": _field("measure", "nominal", scale={"domain": measures, "range": colors}, legend=_bottom_legend())
        },
    }  # fmt: skip
    labels = {
        "mark": VALUE_LABEL | {"dy": -5},
        "encoding": base | {"text": _field("amount", "quantitative", format=COMPACT_FORMAT)},
    }
    title = "Estimate vs actual by category" if has_budget else "Actual spend by category"
    subtitle = f"Effective cost in {currency}" + ("" if has_budget else " (no budget baseline)")
    return ChartSpec("estimate_vs_actual", title, _styled({"layer": [bars, labels]}, rows, title, subtitle))


def daily_spend_chart(daily: Sequence[DailySpend], currency: str) -> ChartSpec:
    """Stacked bars of effective spend per charge day and cost category, compute at the bottom."""
    order = ordered_categories(spend.cost_category for spend in daily)
    rows = [
        {
            "day": spend.charge_day.isoformat(),
            "category": spend.cost_category,
            "stack_rank": order.index(spend.cost_category),
            "amount": float(spend.effective_cost),
        }
        for spend in daily
    ]
    bars = {
        "mark": {"type": "bar", "width": {"band": 0.8}},
        "encoding": {
            "x": _field(
                "day", "temporal", timeUnit="utcyearmonthdate", bandPosition=0,
                axis=_day_axis([row["day"] for row in rows]),
            ),
            "y": _field("amount", "quantitative", aggregate="sum", axis=_money_axis(currency)),
            "color": _field(
                "category", "nominal", scale=_category_scale(order), legend={"title": "Category", "orient": "right"}
            ),
            "order": _field("stack_rank", "quantitative"),
        },
    }  # fmt: skip
    title = "Daily spend by category"
    subtitle = f"Effective cost in {currency} per charge day (UTC)"
    return ChartSpec("daily_spend", title, _styled(bars, rows, title, subtitle))


def variance_waterfall_chart(
    total: CostLine,
    categories: Sequence[CostLine],
    currency: str,
    steps: Sequence[tuple[str, Decimal]] | None = None,
) -> ChartSpec:
    """Waterfall from the estimate to the actual: the given steps (the run's variance causes),
    else compute rate, compute usage and the other categories."""
    steps = waterfall_steps(categories) if steps is None else steps
    rows = [_waterfall_bar("Estimate", Decimal(0), total.estimated_cost, TOTAL_KIND)]
    running = total.estimated_cost
    for label, delta in steps:
        kind = "Adds to cost" if delta > 0 else "Saves cost"
        rows.append(_waterfall_bar(label, running, running + delta, kind))
        running += delta
    rows.append(_waterfall_bar("Actual", Decimal(0), total.actual_cost, TOTAL_KIND))
    kinds = [TOTAL_KIND, "Adds to cost", "Saves cost"]
    step = _field(
        "step", "nominal", sort=[row["step"] for row in rows],
        axis={"title": "Step from estimate to actual", "labelAngle": 0, "labelExpr": "split(datum.label, '\\n')"},
    )  # fmt: skip
    bars = {
        "mark": {"type": "bar", "size": 38},
        "encoding": {
            "x": step,
            "y": _field("start", "quantitative", axis=_money_axis(currency)),
            "y2": {"field": "end"},
            "color": _field(
                "kind", "nominal",
                scale={"domain": kinds, "range": [ACTUAL_COLOR, INCREASE_COLOR, DECREASE_COLOR]},
                legend=_bottom_legend(),
            ),
        },
    }  # fmt: skip
    labels = {
        "mark": VALUE_LABEL | {"dy": -6},
        "encoding": {"x": step, "y": _field("top", "quantitative"), "text": _field("label", "nominal")},
        "transform": [
            {
                "calculate": f"(datum.kind != '{TOTAL_KIND}' && datum.delta > 0 ? '+' : '')"
                f" + format(datum.delta, '{COMPACT_FORMAT}')",
                "as": "label",
            }
        ],
    }
    title = "Variance waterfall: estimate to actual"
    subtitle = f"{currency}; red adds to the estimate, green saves against it"
    spec = _styled({"layer": [bars, labels]}, rows, title, subtitle)
    spec["width"] = max(WIDTH, WATERFALL_STEP_WIDTH * len(rows))
    return ChartSpec("variance_waterfall", title, spec)


def waterfall_steps(categories: Sequence[CostLine]) -> list[tuple[str, Decimal]]:
    """The steps from the estimate to the actual: compute rate and usage, then each other
    category's variance (its whole actual when it had no estimate)."""
    steps = []
    for name in ordered_categories(line.cost_category for line in categories):
        line = next(line for line in categories if line.cost_category == name)
        if name == "compute" and line.rate_variance is not None and line.usage_variance is not None:
            steps += [("compute rate", line.rate_variance), ("compute usage", line.usage_variance)]
        elif line.variance is not None:
            steps.append((name, line.variance))
        else:
            steps.append((f"{name} (unbudgeted)", line.actual_cost))
    return steps


def _waterfall_bar(step: str, start: Decimal, end: Decimal, kind: str) -> dict[str, Any]:
    return {
        "step": "\n".join(textwrap.wrap(step, WATERFALL_LABEL_WIDTH, break_long_words=False)),
        "start": float(start),
        "end": float(end),
        "top": float(max(start, end)),
        "kind": kind,
        "delta": float(end - start),
    }


def top_resources_chart(resources: Sequence[RunResource], currency: str) -> ChartSpec:
    """Horizontal bars of the run's largest resources by effective cost, colored by category."""
    rows = [
        {
            "resource": f"{rank}. {_short_resource(resource.resource)}",
            "category": resource.cost_category or "other",
            "amount": float(resource.effective_cost),
        }
        for rank, resource in enumerate(resources, start=1)
    ]
    bars = _horizontal_bars(
        "resource", "Resource (by rank)", rows, currency,
        color=_field(
            "category", "nominal", scale=_category_scale([row["category"] for row in rows]),
            legend={"title": "Category", "orient": "right"},
        ),
    )  # fmt: skip
    title = "Top resources of the run"
    subtitle = f"Effective cost in {currency} over all billing periods, largest first"
    return ChartSpec("top_resources", title, _styled(bars, rows, title, subtitle))


def waste_by_kind_chart(kinds: Sequence[WasteKind], currency: str) -> ChartSpec:
    """Horizontal bars of the run's waste per kind, every kind shown (0 where none)."""
    rows = [{"kind": kind.kind.replace("_", " "), "amount": float(kind.effective_cost)} for kind in kinds]
    bars = _horizontal_bars("kind", "Kind of waste", rows, currency, bar_color=INCREASE_COLOR)
    title = "Waste by kind"
    subtitle = f"Effective cost in {currency} of attributed spend that bought no training"
    return ChartSpec("waste_by_kind", title, _styled(bars, rows, title, subtitle))


def _horizontal_bars(
    label_field: str,
    label_title: str,
    rows: Sequence[dict[str, Any]],
    currency: str,
    *,
    color: dict[str, Any] | None = None,
    bar_color: str | None = None,
) -> dict[str, Any]:
    """Bars of `amount` per label, in the rows' order, each with its amount written after it."""
    base = {
        "y": _field(
            label_field, "nominal", sort=[row[label_field] for row in rows],
            axis={"title": label_title, "labelLimit": 300},
        ),
        "x": _field("amount", "quantitative", axis=_money_axis(currency, "Effective cost")),
    }  # fmt: skip
    bar_mark: dict[str, Any] = {"type": "bar", "cornerRadiusTopRight": 2, "cornerRadiusBottomRight": 2}
    if bar_color:
        bar_mark["color"] = bar_color
    bars = {"mark": bar_mark, "encoding": base | ({"color": color} if color else {})}
    labels = {
        "mark": VALUE_LABEL | {"align": "left", "dx": 4},
        "encoding": base | {"text": _field("amount", "quantitative", format=COMPACT_FORMAT)},
    }
    return {"layer": [bars, labels]}


def _short_resource(resource: str | None) -> str:
    """The resource id, its end kept when long: ARNs and GCP names differ in their last part. ASCII
    dots: the renderer measures `…` too narrow and draws the axis title over such labels."""
    if resource is None:
        return NO_RESOURCE_ID
    if len(resource) <= RESOURCE_LABEL_CHARACTERS:
        return resource
    return "..." + resource[-(RESOURCE_LABEL_CHARACTERS - 3) :]
