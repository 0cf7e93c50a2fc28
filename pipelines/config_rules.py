"""The rules every part of `runledger.yaml` shares: the strict model base, the configuration
error, weights and the rules of split weights and alert levels; the one reader of every YAML file
RunLedger reads (configuration, budgets, run registry, manual costs), with its limits."""

from __future__ import annotations

import re
import reprlib
from collections import Counter
from decimal import Decimal
from pathlib import Path
from typing import Annotated

import yaml
from pydantic import AfterValidator, BaseModel, ConfigDict

HOST = re.compile(r"^[A-Za-z0-9.\-]+$")


class ConfigError(ValueError):
    """A configuration problem; the message names the file and key."""


def repeated(names: list[str]) -> list[str]:
    """The names that occur more than once, sorted."""
    return sorted(name for name, count in Counter(names).items() if count > 1)


def unique_names(noun: str) -> AfterValidator:
    """The rule of every list of named entries (sources, rules, destinations): each `name` once.

    Args:
        noun: what the entries are, for the message (`rule` → "rule names must be unique").
    """

    def _check(entries: list) -> list:
        duplicates = repeated([entry.name for entry in entries])
        if duplicates:
            raise ValueError(f"{noun} names must be unique, repeated: {', '.join(duplicates)}")
        return entries

    return AfterValidator(_check)


def _host_name(value: str) -> str:
    if not HOST.match(value):
        raise ValueError(f"{value!r} is not a host name or address")
    return value


HostName = Annotated[str, AfterValidator(_host_name)]
"""A host name or address (letters, digits, `.` and `-`)."""


WEIGHT_DECIMAL_PLACES = 10
"""Decimal places a weight may have: the splits count weights in units of 1e-10."""
MAX_WEIGHT = Decimal(10) ** 6
"""The largest weight: weight units x seconds of overlap must fit the splits' HUGEINT arithmetic."""


def require_weight(weight: Decimal) -> Decimal:
    """The one rule for every weight (run registry and fixed shared-cost splits): a decimal in
    (0, 10^6] with at most 10 decimal places, so that the split counts it exactly."""
    if weight <= 0:
        raise ValueError(f"must be greater than 0, got {weight}")
    if weight > MAX_WEIGHT:
        raise ValueError(f"must be at most 1000000 (weights are relative: scale them all down), got {weight}")
    if weight.as_tuple().exponent < -WEIGHT_DECIMAL_PLACES:
        raise ValueError(
            f"must have at most {WEIGHT_DECIMAL_PLACES} decimal places (the split counts weights in units "
            f"of 1e-10), got {weight}; round it"
        )
    return weight


Weight = Annotated[Decimal, AfterValidator(require_weight)]
"""A weight as written (`0.00001` is read from its text, never through a float's binary value)."""


class StrictModel(BaseModel):
    """A settings model: unknown keys are errors, values are frozen."""

    model_config = ConfigDict(extra="forbid", frozen=True)


def require_split_weights(split: str, weights: dict[str, Decimal] | None) -> None:
    """The one rule for a split's weights (shared-cost and commitment rules): a `fixed` split
    takes weights per training run summing to exactly 1, any other split none."""
    if split != "fixed":
        if weights is not None:
            raise ValueError(f"weights: only a `fixed` split takes weights (this rule splits {split})")
        return
    if not weights:
        raise ValueError("weights: a `fixed` split needs weights per training run, summing to 1")
    total = sum(weights.values())
    if total != 1:
        raise ValueError(f"weights: must sum to exactly 1, they sum to {total}")


def not_below(value: Decimal, lower: Decimal | None, lower_name: str) -> Decimal:
    """The one rule of an `over` level: at least its `warning` level (`lower`, None when that
    failed validation itself), else an error naming the warning key."""
    if lower is not None and value < lower:
        raise ValueError(f"must be at least {lower_name} ({lower}), got {value}")
    return value


YAML_MAX_BYTES = 8 * 2**20
"""The largest YAML file RunLedger reads (a manual cost list this long belongs in a CSV file)."""
YAML_MAX_ALIASES = 100
"""The most aliases (`*name`) a YAML file may use."""
YAML_MAX_VALUES = 1_000_000
"""The most values (scalars, lists and mappings) a YAML file may hold once its aliases are expanded."""
YAML_MAX_DEPTH = 64
"""The deepest a YAML file's lists and mappings may nest."""
EXCERPT_CHARS = 80
"""The most characters of a value an error message quotes."""
MESSAGE_CHARS = 400
"""The most characters of one problem an error message says (a validator's message may quote its value)."""


def shorten(text: str, limit: int = MESSAGE_CHARS) -> str:
    """`text` cut to `limit` characters, saying how many were left out."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… ({len(text) - limit:,} more characters)"


def excerpt(value: object) -> str:
    """`value` as an error message quotes it: a repr built no longer than `EXCERPT_CHARS` or so,
    however large the value (a text quoted, a number as written)."""
    short = reprlib.Repr()
    short.maxlevel, short.maxlist, short.maxdict = 2, 4, 4
    short.maxstring = short.maxother = EXCERPT_CHARS // 2
    text = short.repr(value) if isinstance(value, (str, list, dict, tuple)) else str(value)
    return shorten(text, EXCERPT_CHARS)


class _Refused(Exception):
    """A YAML file past a limit, at `mark`."""

    def __init__(self, problem: str, mark: yaml.Mark | None) -> None:
        super().__init__(problem)
        self.problem = problem
        self.mark = mark


def _limited_loader(base: type[yaml.SafeLoader] | type[yaml.BaseLoader]) -> type:
    """`base` counting aliases and nesting as it composes, refusing past the limits."""

    class Limited(base):
        def __init__(self, stream: str) -> None:
            super().__init__(stream)
            self.aliases = 0
            self.depth = 0

        def compose_node(self, parent: yaml.Node | None, index: object) -> yaml.Node:
            if self.check_event(yaml.AliasEvent):
                self.aliases += 1
                if self.aliases > YAML_MAX_ALIASES:
                    raise _Refused(f"more than {YAML_MAX_ALIASES} aliases (*name)", self.peek_event().start_mark)
            self.depth += 1
            if self.depth > YAML_MAX_DEPTH:
                mark = self.peek_event().start_mark
                raise _Refused(f"lists and mappings nested more than {YAML_MAX_DEPTH} deep", mark)
            try:
                return super().compose_node(parent, index)
            finally:
                self.depth -= 1

    return Limited


_SAFE_LOADER = _limited_loader(yaml.SafeLoader)
_TEXT_LOADER = _limited_loader(yaml.BaseLoader)


def _expanded_values(node: yaml.Node, counted: dict[int, int], open_nodes: set[int]) -> int:
    """How many values `node` holds with every alias written out (an aliased node is one node
    object, counted once and reused); more than `YAML_MAX_VALUES` is refused as soon as seen."""
    if id(node) in counted:
        return counted[id(node)]
    if id(node) in open_nodes:
        raise _Refused("an alias refers to a list or mapping that contains it", node.start_mark)
    open_nodes.add(id(node))
    total = 1
    if isinstance(node, yaml.SequenceNode):
        children = node.value
    elif isinstance(node, yaml.MappingNode):
        children = [child for pair in node.value for child in pair]
    else:
        children = []
    for child in children:
        total += _expanded_values(child, counted, open_nodes)
        if total > YAML_MAX_VALUES:
            raise _Refused(
                f"its aliases expand to more than {YAML_MAX_VALUES:,} values; write the values out", node.start_mark
            )
    open_nodes.discard(id(node))
    counted[id(node)] = total
    return total


def read_yaml(path: Path, *, plain: bool = False) -> object:
    """The one reader of every YAML file RunLedger reads: at most `YAML_MAX_BYTES`, `YAML_MAX_ALIASES`
    aliases, `YAML_MAX_VALUES` values with the aliases expanded and `YAML_MAX_DEPTH` levels, checked
    before any value is built.

    Args:
        path: the file, as messages name it.
        plain: every scalar as its text (`12000.10` stays `'12000.10'`, dates stay text), no objects built.

    Raises:
        ConfigError: the file is missing, unreadable, larger than the limit, not YAML or past a
            limit; the message names the file and the line.
    """
    if not path.is_file():
        raise ConfigError(f"{path}: file not found")
    size = path.stat().st_size
    if size > YAML_MAX_BYTES:
        raise ConfigError(f"{path}: {size:,} bytes, more than the {YAML_MAX_BYTES:,} a YAML file may have")
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as error:
        raise ConfigError(f"{path}: cannot read the file as UTF-8 text: {error}") from None
    loader = None
    try:
        loader = (_TEXT_LOADER if plain else _SAFE_LOADER)(text)  # refuses a character YAML does not allow
        node = loader.get_single_node()
        if node is None:
            return None
        _expanded_values(node, {}, set())
        return loader.construct_document(node)
    except _Refused as refused:
        where = f" (line {refused.mark.line + 1})" if refused.mark else ""
        raise ConfigError(f"{path}: refused{where}: {refused.problem}") from None
    except yaml.reader.ReaderError as error:
        raise ConfigError(
            f"{path}: not valid YAML (character {error.position + 1}): #x{error.character:04x} is a character "
            "YAML does not allow"
        ) from None
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        where = f" (line {mark.line + 1}, column {mark.column + 1})" if mark else ""
        problem = getattr(error, "problem", None) or str(error)
        raise ConfigError(f"{path}: not valid YAML{where}: {problem}") from None
    finally:
        if loader is not None:
            loader.dispose()
