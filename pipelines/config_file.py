"""The one reader of every YAML file RunLedger reads (configuration, budgets, run registry, manual
costs), with its limits, and the configuration error it raises: kept apart from the settings models
(no pydantic), so that a command says a missing or malformed file before it loads them."""

from __future__ import annotations

import os
import reprlib
from pathlib import Path

import yaml

CONFIG_ENV_VAR = "RUNLEDGER_CONFIG"
DEFAULT_CONFIG_FILE = "runledger.yaml"


class ConfigError(ValueError):
    """A configuration problem; the message names the file and key."""


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


def default_config_path() -> Path:
    """`$RUNLEDGER_CONFIG`, else `./runledger.yaml` (read when called, never at import)."""
    return Path(os.environ.get(CONFIG_ENV_VAR) or DEFAULT_CONFIG_FILE)


def read_config_document(path: Path | None = None) -> tuple[Path, dict]:
    """`runledger.yaml` as read, before any of its values is validated.

    Args:
        path: the config file; defaults to `$RUNLEDGER_CONFIG`, then `./runledger.yaml`.

    Returns:
        The file's resolved path and its top-level mapping.

    Raises:
        ConfigError: the file is missing, unreadable, not YAML, empty or not a mapping of keys.
    """
    path = (path or default_config_path()).resolve()
    document = read_yaml(path)
    if document is None or document == {}:
        raise ConfigError(
            f"{path}: the file is empty: name the billing exports under `sources:` (docs/configuration.md; "
            "`runledger demo` writes a complete example)"
        )
    if not isinstance(document, dict):
        raise ConfigError(f"{path}: the top level must be a mapping of keys (warehouse, sources, …)")
    if "base_dir" in document:
        raise ConfigError(f"{path}: base_dir: unknown key")
    return path, document
