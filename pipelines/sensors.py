"""The delivery sensor: a new CUR manifest or later GCP export rows request their billing period.

Every billing source reader names its deliveries with a *delivery mark* per billing period
(`delivery_marks()`): the manifest's executionId for AWS exports, the latest `export_time` for
the GCP export, a fingerprint of the files for FOCUS files. The sensor's cursor keeps the marks
it has seen, `{source: {partition key: mark}}`; a period whose mark changed is requested once,
with the raw loads of the sources that delivered it and everything downstream.
"""

from __future__ import annotations

import hashlib
import json
from collections import defaultdict

import dagster as dg

from pipelines.config import RunLedgerConfig
from pipelines.ingest.readers import reader_for
from pipelines.orchestration.partitions import billing_periods, partition_key

DELIVERY_SENSOR = "new_billing_deliveries"


def changed_deliveries(seen: dict[str, dict[str, str]], current: dict[str, dict[str, str]]) -> dict[str, list[str]]:
    """Per partition key, the sources whose mark differs from the one seen before."""
    changed: dict[str, list[str]] = defaultdict(list)
    for source, marks in current.items():
        for key, mark in marks.items():
            if seen.get(source, {}).get(key) != mark:
                changed[key].append(source)
    return dict(sorted(changed.items()))


def build_delivery_sensor(
    job: dg.UnresolvedAssetJobDefinition,
    config: RunLedgerConfig | None,
    source_keys: dict[str, dg.AssetKey],
    downstream_keys: list[dg.AssetKey],
) -> dg.SensorDefinition:
    """The sensor over every configured billing source.

    Args:
        job: the nightly job the run requests target.
        config: the configuration the code location was built from (None: nothing to watch).
        source_keys: the raw load asset of each billing source, by source name.
        downstream_keys: every asset of the job that is not a raw load.
    """
    interval = config.orchestration.sensor_interval_seconds if config else 300

    @dg.sensor(
        name=DELIVERY_SENSOR,
        job=job,
        minimum_interval_seconds=interval,
        description="Requests a billing period when a source delivered it anew: a new CUR manifest (executionId) "
        "or a later export_time in the GCP export. The cursor keeps every delivery seen, so none triggers twice.",
    )
    def new_billing_deliveries(context: dg.SensorEvaluationContext) -> dg.SensorResult | dg.SkipReason:
        if config is None or not config.billing_sources:
            return dg.SkipReason("no billing sources configured (runledger.yaml not found or without sources)")
        seen: dict[str, dict[str, str]] = json.loads(context.cursor) if context.cursor else {}
        current: dict[str, dict[str, str]] = {}
        for source in config.billing_sources:
            try:
                marks = reader_for(source, config).delivery_marks()
            except Exception as error:  # noqa: BLE001 - one unreadable source must not hide the others' deliveries
                context.log.warning(f"{source.name}: cannot read deliveries: {error}")
                continue
            current[source.name] = {
                partition_key(period): str(mark)
                for period, mark in marks.items()
                if billing_periods.has_partition_key(partition_key(period))
            }
        changed = changed_deliveries(seen, current)
        run_requests = []
        for key, sources in changed.items():
            delivered = sorted(f"{source}={current[source][key]}" for source in sources)
            run_requests.append(
                dg.RunRequest(
                    run_key=f"{key}:{hashlib.sha256('|'.join(delivered).encode()).hexdigest()[:16]}",
                    partition_key=key,
                    asset_selection=[source_keys[source] for source in sorted(sources)] + downstream_keys,
                    tags={"runledger/deliveries": ", ".join(delivered)[:200]},
                )
            )
        cursor = {**seen, **{source: {**seen.get(source, {}), **marks} for source, marks in current.items()}}
        return dg.SensorResult(run_requests=run_requests, cursor=json.dumps(cursor, sort_keys=True))

    return new_billing_deliveries
