"""The FinOps Foundation's focus-validator run on a FOCUS Parquet file: the applicability criteria
the data itself shows, the validator's console report parsed, and the failures that
`tests/focus_validator_allowlist.yaml` does not excuse.

The validator (focus-validator 2.2.1, Python 3.12) lives in its own venv, `.venv-focus-validator`,
which `make test` creates from `constraints-focus-validator.txt`. It runs offline
(`--block-download`: the FOCUS 1.2 rules it bundles) in a working folder of the test's own that
holds the one file it reads relative to the working directory, its currency codes (and receives
its log file).
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

import duckdb
import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
VENV = REPO / ".venv-focus-validator"
ALLOWLIST = REPO / "tests" / "focus_validator_allowlist.yaml"
FOCUS_VERSION = "1.2"
CURRENCY_CODES = Path("focus_validator") / "rules" / "currency_codes.csv"
TIMEOUT_SECONDS = 600

# What the data must show for each of the validator's applicability criteria (FOCUS 1.2's
# "when the provider supports ..."): the columns it reads and a condition over all rows. A
# criterion whose columns the file lacks is not met.
CRITERIA: dict[str, tuple[tuple[str, ...], str]] = {
    "ACCOUNT_NAMING_SUPPORTED": (("BillingAccountName",), "count(BillingAccountName) > 0"),
    "AVAILABILITY_ZONE_SUPPORTED": (("AvailabilityZone",), "count(AvailabilityZone) > 0"),
    "CAPACITY_RESERVATION_SUPPORTED": (("CapacityReservationId",), "count(CapacityReservationId) > 0"),
    "COMMITMENT_DISCOUNT_SUPPORTED": (("CommitmentDiscountId",), "count(CommitmentDiscountId) > 0"),
    "MULTIPLE_PRICING_CATEGORIES_SUPPORTED": (("PricingCategory",), "count(distinct PricingCategory) > 1"),
    "MULTIPLE_SUB_ACCOUNT_TYPES_SUPPORTED": (("SubAccountType",), "count(distinct SubAccountType) > 1"),
    "MULTIPLE_BILLING_ACCOUNT_TYPES_SUPPORTED": (("BillingAccountType",), "count(distinct BillingAccountType) > 1"),
    "NEGOTIATED_PRICING_SUPPORTED": (
        ("ContractedCost", "ListCost"),
        "count(*) filter (where ContractedCost is distinct from ListCost) > 0",
    ),
    "PUBLIC_PRICE_LIST_SUPPORTED": (("ListUnitPrice",), "count(ListUnitPrice) > 0"),
    "USAGE_MEASUREMENT_SUPPORTED": (("ConsumedQuantity",), "count(ConsumedQuantity) > 0"),
    "UNIT_PRICING_SUPPORTED": (("PricingQuantity",), "count(PricingQuantity) > 0"),
    "SUB_ACCOUNT_SUPPORTED": (("SubAccountId",), "count(SubAccountId) > 0"),
    "BILLING_BASED_ON_PROVISIONED_RESOURCES_SUPPORTED": (("ResourceId",), "count(ResourceId) > 0"),
    "RESOURCE_TYPE_ASSIGNMENT_SUPPORTED": (("ResourceType",), "count(ResourceType) > 0"),
    "PRICING_BILLING_CURRENCY_DIFFERENCES_SUPPORTED": (
        ("PricingCurrency", "BillingCurrency"),
        "count(*) filter (where PricingCurrency <> BillingCurrency) > 0",
    ),
    "VIRTUAL_CURRENCY_SUPPORTED": (
        ("PricingCurrency",),
        "count(*) filter (where not list_contains($currency_codes, PricingCurrency)) > 0",
    ),
    "REGION_SUPPORTED": (("RegionId",), "count(RegionId) > 0"),
    "TAGGING_SUPPORTED": (("Tags",), "count(*) filter (where Tags is not null and Tags <> '{}') > 0"),
}


def package_dir() -> Path:
    """The validator's installed package folder.

    Fails the test, saying how to install it, when the venv is missing.
    """
    packages = sorted(VENV.glob("lib/python3.*/site-packages/focus_validator"))
    if not (VENV / ".installed").is_file() or not packages:
        pytest.fail(f"{VENV} is missing: create it with `make .venv-focus-validator/.installed` (make test does)")
    return packages[-1]


@cache
def rule_definitions() -> dict[str, dict]:
    """The FOCUS 1.2 rules the validator bundles, by rule id."""
    (model,) = sorted((package_dir() / "rules").glob(f"model-{FOCUS_VERSION}.*.json"))
    return json.loads(model.read_text())["ModelRules"]


@cache
def composite_parents() -> dict[str, tuple[str, ...]]:
    """Of each rule, the composite rules that check it as one of their parts (CheckModelRule)."""
    parents: dict[str, list[str]] = {}

    def parts(requirement: dict) -> list[str]:
        if requirement.get("CheckFunction") == "CheckModelRule":
            return [requirement["ModelRuleId"]]
        return [rule for item in requirement.get("Items", []) for rule in parts(item)]

    for rule_id, rule in rule_definitions().items():
        for part in parts(rule["ValidationCriteria"].get("Requirement") or {}):
            parents.setdefault(part, []).append(rule_id)
    return {rule_id: tuple(composites) for rule_id, composites in parents.items()}


@cache
def currency_codes() -> tuple[str, ...]:
    """The ISO 4217 codes the validator knows (its currency_codes.csv)."""
    text = (package_dir().parent / CURRENCY_CODES).read_text()
    return tuple(line.split(",", 1)[1] for line in text.splitlines()[1:] if "," in line)


def applicability_criteria(file: Path) -> list[str]:
    """The applicability criteria a FOCUS Parquet file's data shows, for `--applicability-criteria`.

    A criterion is met when the data shows the provider feature it names (`CRITERIA`): a column
    that only a provider with the feature fills is filled on some row (a RegionId means regions,
    a CommitmentDiscountId commitment discounts, a ResourceType resource types, a ListUnitPrice a
    public price list, a PricingQuantity unit pricing, non-empty Tags tagging, …), a column that
    tells kinds apart holds more than one (PricingCategory, SubAccountType, BillingAccountType),
    ContractedCost differs from ListCost somewhere (negotiated prices), PricingCurrency differs
    from BillingCurrency (pricing in another currency) or is no ISO 4217 code (a virtual
    currency). A criterion reading a column the file lacks is not met.

    Args:
        file: a Parquet file of `runledger export focus`.

    Returns:
        The criteria met, in the validator's order.
    """
    with duckdb.connect() as conn:
        columns = set(conn.read_parquet(str(file)).to_view("export").columns)
        met = []
        for criterion, (needed, condition) in CRITERIA.items():
            if not set(needed) <= columns:
                continue
            parameters = {"currency_codes": list(currency_codes())} if "$currency_codes" in condition else {}
            ((holds,),) = conn.execute(f"select {condition} from export", parameters).fetchall()
            if holds:
                met.append(criterion)
    return met


@dataclass
class Failure:
    """A rule the validator reports as failed: its violation count, its message, its requirement
    (the rule's MustSatisfy text) and the sample of violating values it printed."""

    rule_id: str
    violations: str
    message: str
    requirement: str = ""
    sample: list[str] = field(default_factory=list)

    def upstream(self) -> list[str] | None:
        """The rules this one failed for alone (a composite's failed children, or the dependency that
        failed before it could run), None when it failed on its own rows."""
        rule = re.escape(self.rule_id)
        composite = re.fullmatch(rf"{rule}: (?:AND|OR) failed - failed child rules: \[(.*)\]", self.message)
        if composite:
            return [child.strip() for child in composite[1].split(",")]
        dependency = re.fullmatch(rf"Validation rule {rule} failed \[Upstream dependency failed: (.*)\]", self.message)
        if dependency:
            return [part.split(" - ")[0].strip() for part in dependency[1].split(",")]
        return None

    def describe(self) -> str:
        """One line: the rule, its count, its message (without the dependencies it lists), what it
        requires and the validator's sample of violating values."""
        message = self.message.split(" [Upstream dependency failed:")[0]
        sample = "; ".join(self.sample) if self.sample else "no sample printed"
        return f"{self.rule_id}: {self.violations} violations: {message} | requires: {self.requirement} | e.g. {sample}"


@dataclass
class Report:
    """The validator's verdict on one file."""

    file: Path
    criteria: list[str]
    total: int
    passed: int
    failed: int
    skipped: int
    failures: dict[str, Failure]


SUMMARY = re.compile(r"^Total: (\d+) \| Pass: (\d+) \| Fail: (\d+) \| Skipped: (\d+)$", re.MULTILINE)
FAILURE = re.compile(r"^- (\S+): violations=(\S+); (.*)$")


def parse_console(file: Path, criteria: list[str], output: str) -> Report:
    """The validator's console report (`--output-type console --show-violations`) as a Report."""
    summary = SUMMARY.search(output)
    if summary is None:
        raise AssertionError(f"focus-validator printed no summary for {file}:\n{output[-3000:]}")
    failures: dict[str, Failure] = {}
    current: Failure | None = None
    in_sample = False
    for line in output.partition("\n--- Failures ---\n")[2].splitlines():
        if match := FAILURE.match(line):
            current = failures[match[1]] = Failure(match[1], match[2], match[3])
            in_sample = False
        elif current and line.startswith("  MustSatisfy: "):
            current.requirement = line.removeprefix("  MustSatisfy: ")
        elif current and line == "  Sample violations:":
            in_sample = True
        elif current and in_sample and line.startswith("    "):
            current.sample.append(line.strip())
    total, passed, failed, skipped = (int(summary[i]) for i in range(1, 5))
    if len(failures) != failed:
        raise AssertionError(f"parsed {len(failures)} failures of the {failed} focus-validator reports for {file}")
    return Report(file, criteria, total, passed, failed, skipped, failures)


def validate(file: Path, criteria: Sequence[str], workdir: Path) -> Report:
    """Runs the validator on a Parquet file with the given applicability criteria (none: the
    validator's default, rules without criteria only).

    Args:
        file: the FOCUS 1.2 Parquet file.
        criteria: applicability criteria ids.
        workdir: an empty folder to run it in (it reads its currency codes from there and writes its log).
    """
    package = package_dir()
    (workdir / CURRENCY_CODES).parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(package.parent / CURRENCY_CODES, workdir / CURRENCY_CODES)
    command = [
        str(VENV / "bin" / "focus-validator"),
        "--data-file",
        str(file),
        "--validate-version",
        FOCUS_VERSION,
        "--block-download",
        "--output-type",
        "console",
        "--show-violations",
    ]
    if criteria:
        command += ["--applicability-criteria", ",".join(criteria)]
    result = subprocess.run(
        command,
        cwd=workdir,
        capture_output=True,
        text=True,
        timeout=TIMEOUT_SECONDS,
        env={"PATH": "/usr/bin:/bin", "PYTHONIOENCODING": "utf-8", "HOME": str(workdir)},
        check=False,
    )
    if result.returncode != 0:
        raise AssertionError(f"focus-validator exited {result.returncode} on {file}:\n{result.stderr[-3000:]}")
    return parse_console(file, list(criteria), result.stdout)


@dataclass(frozen=True)
class Allowlist:
    """`tests/focus_validator_allowlist.yaml`: the validator's own faults."""

    rules: frozenset[str]
    all_criteria_rules: frozenset[str]

    @classmethod
    def load(cls, path: Path = ALLOWLIST) -> Allowlist:
        document = yaml.safe_load(path.read_text())
        return cls(
            frozenset(entry["id"] for entry in document["rules"]),
            frozenset(document["all_criteria_rules"]["rules"]),
        )

    def excuses(self, failure: Failure, report: Report, seen: frozenset[str] = frozenset()) -> bool:
        """Whether the failure is the validator's fault: an allowlisted rule; a rule applied only by
        its OR-ed criteria (one of its own criteria is not met by the data); or a rule that failed
        only because rules it depends on failed, each of them excused."""
        if failure.rule_id in self.rules:
            return True
        if self.out_of_scope(failure.rule_id, report):
            return True
        upstream = failure.upstream()
        if not upstream or failure.rule_id in seen:
            return False
        return all(
            rule in report.failures and self.excuses(report.failures[rule], report, seen | {failure.rule_id})
            for rule in upstream
        )

    def out_of_scope(self, rule_id: str, report: Report) -> bool:
        """Whether the spec does not apply the rule to the data at all, which the validator's OR-ed
        criteria hide: a rule of `all_criteria_rules` whose own criteria the data does not all meet,
        or a rule checked only as a part of composite rules that are themselves out of scope (e.g.
        ResourceType-C-005-C, a part of ResourceType-C-003-C, a part of ResourceType-C-000-C)."""
        if rule_id in self.all_criteria_rules:
            return not set(rule_definitions()[rule_id]["ApplicabilityCriteria"]) <= set(report.criteria)
        composites = composite_parents().get(rule_id, ())
        return bool(composites) and all(self.out_of_scope(parent, report) for parent in composites)

    def unexcused(self, report: Report) -> list[Failure]:
        """The report's failures the allowlist does not excuse, by rule id."""
        return [
            report.failures[rule] for rule in sorted(report.failures) if not self.excuses(report.failures[rule], report)
        ]


def explain(report: Report, failures: Sequence[Failure]) -> str:
    """The failures for an assertion message: first those that failed on their own rows (or on a
    missing column), each with its count, message, requirement and sample, then the ids of those
    that failed only because a rule they depend on failed."""
    own = [failure for failure in failures if failure.upstream() is None]
    dependent = [failure.rule_id for failure in failures if failure.upstream() is not None]
    return (
        f"focus-validator 2.2.1 on {report.file.name} ({report.total} rules: {report.passed} passed, {report.failed} "
        f"failed, {report.skipped} skipped; applicability criteria {','.join(report.criteria) or 'none'}): "
        f"{len(failures)} failures outside {ALLOWLIST.name}, {len(own)} of them on their own:\n"
        + "\n".join(failure.describe() for failure in own)
        + (f"\nfailing only through the rules they depend on: {', '.join(dependent)}" if dependent else "")
    )
