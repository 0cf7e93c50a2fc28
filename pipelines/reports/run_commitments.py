"""Unused commitment charged to a run (`attribution.commitments`): the run's cost with and
without it, and what was charged per billing period and commitment."""

from __future__ import annotations

from decimal import Decimal

from pipelines.reports.data import RunDetails, RunOverview
from pipelines.reports.document import Block, Cell, Facts, Paragraph, Table, billing_period_label, money, percent
from pipelines.reports.run_facts import currency_of


def commitment_blocks(overview: RunOverview, details: RunDetails) -> tuple[Block, ...]:
    """The run's actual cost with and without the unused commitment charged to it (and its
    variance both ways when it has a budget), then the charges; empty when nothing was charged."""
    if not details.commitment_charges:
        return ()
    currency = currency_of(overview)
    total = overview.total
    charged = sum((charge.charged_cost for charge in details.commitment_charges), Decimal(0))
    without = total.actual_cost - charged
    facts = [
        (f"Actual without the chargeback ({currency})", Cell(money(without))),
        (f"Unused commitment charged ({currency})", Cell(money(charged, signed=True))),
        (f"Actual with it ({currency})", Cell(money(total.actual_cost))),
    ]
    estimate = total.estimated_cost
    if overview.header.has_budget and estimate:
        facts += [
            ("Variance without the chargeback", Cell(_variance(without - estimate, estimate, currency))),
            ("Variance with it", Cell(_variance(total.actual_cost - estimate, estimate, currency))),
        ]
    return (
        Facts(tuple(facts)),
        Table(
            columns=("Billing period", "Commitment", "Type", "Rule", f"Charged ({currency})"),
            rows=tuple(
                (
                    Cell(billing_period_label(charge.billing_period)),
                    Cell(charge.commitment_id),
                    Cell(charge.commitment_type or ""),
                    Cell(charge.allocation_rule),
                    Cell(money(charge.charged_cost)),
                )
                for charge in details.commitment_charges
            ),
            numeric_columns=frozenset({4}),
            wrapping_columns=frozenset({1}),
        ),
        Paragraph(
            "The unused part of these commitments (their rows of CommitmentDiscountStatus Unused) is charged to "
            "this run by a rule of attribution.commitments: it is part of the actual cost, the budget variance "
            "and the status above. Without the rule it stays unattributed."
        ),
    )


def _variance(variance: Decimal, estimate: Decimal, currency: str) -> str:
    return f"{money(variance, signed=True)} {currency} ({percent(variance / estimate, signed=True)})"
