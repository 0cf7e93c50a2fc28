"""Registry overlaps and contradictions, reported by `runledger check`.

Two entries overlap when some resource id can match a glob of each while their windows share a
moment: attribution then splits that resource's lines by weight, which is right for a shared eval
node and a mistake for a copy-pasted entry, so the user is shown each one. Whether two globs can
match a common id is decided exactly (a search over both patterns at once), not by sampling ids.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from datetime import UTC, datetime
from itertools import combinations

from pipelines.attribution.registry import RegisteredRun
from pipelines.attribution.settings import SharedRule

# A glob token: ("*",) any run of characters; otherwise a one-character set, given as
# (characters, negated): ("", True) is any character.
_ANY_CHARACTER = (frozenset(), True)
# Characters tried when an example id needs "any character not in these".
_FILLERS = "0123456789abcdefghijklmnopqrstuvwxyz-_."


@dataclass(frozen=True)
class Overlap:
    """Two registry entries claiming a common resource at a common time."""

    first: RegisteredRun
    second: RegisteredRun
    first_pattern: str
    second_pattern: str
    example_resource: str
    start: datetime | None
    end: datetime | None

    def describe(self) -> str:
        window = (
            f"{_moment(self.start) if self.start else 'the beginning'} to "
            f"{_moment(self.end) if self.end else 'open end'}"
        )
        return (
            f"overlap: runs {self.first.id} ({self.first_pattern!r}) and {self.second.id} ({self.second_pattern!r}) "
            f"both claim resources such as {self.example_resource!r} from {window}; "
            f"their lines are split by weight {self.first.weight:g}:{self.second.weight:g}"
        )


def _moment(moment: datetime) -> str:
    if moment.tzinfo is not None:
        moment = moment.astimezone(UTC).replace(tzinfo=None)
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def _tokens(pattern: str) -> list[tuple]:
    tokens: list[tuple] = []
    index = 0
    while index < len(pattern):
        character = pattern[index]
        closing = pattern.find("]", index + 2) if character == "[" else -1
        if character == "*":
            tokens.append(("*",))
        elif character == "?":
            tokens.append(_ANY_CHARACTER)
        elif closing != -1:
            body = pattern[index + 1 : closing]
            negated = body[:1] == "!"
            body = body[1:] if negated else body
            members: set[str] = set()
            position = 0
            while position < len(body):
                if position + 2 < len(body) and body[position + 1] == "-":
                    members.update(chr(code) for code in range(ord(body[position]), ord(body[position + 2]) + 1))
                    position += 3
                else:
                    members.add(body[position])
                    position += 1
            tokens.append((frozenset(members), negated))
            index = closing
        else:
            tokens.append((frozenset(character), False))
        index += 1
    return tokens


def _common_character(first: tuple, second: tuple) -> str | None:
    (first_set, first_negated), (second_set, second_negated) = first, second
    if not first_negated and not second_negated:
        candidates = sorted(first_set & second_set)
    elif not first_negated:
        candidates = sorted(first_set - second_set)
    elif not second_negated:
        candidates = sorted(second_set - first_set)
    else:
        candidates = [c for c in _FILLERS if c not in first_set | second_set]
    return candidates[0] if candidates else None


def common_match(first: str, second: str) -> str | None:
    """An id both globs match, or None when no id can match both.

    Breadth-first search over pairs of positions in the two patterns; `*` either matches nothing
    (moves on) or one more character (stays).
    """
    left, right = _tokens(first), _tokens(second)
    start = (0, 0)
    came_from: dict[tuple[int, int], tuple[tuple[int, int], str] | None] = {start: None}
    queue = deque([start])
    while queue:
        state = queue.popleft()
        i, j = state
        if i == len(left) and j == len(right):
            text = []
            while came_from[state] is not None:
                state, character = came_from[state]
                text.append(character)
            return "".join(reversed(text))
        moves: list[tuple[tuple[int, int], str]] = []
        if i < len(left) and left[i] == ("*",):
            moves.append(((i + 1, j), ""))
        if j < len(right) and right[j] == ("*",):
            moves.append(((i, j + 1), ""))
        if i < len(left) and j < len(right):
            left_star, right_star = left[i] == ("*",), right[j] == ("*",)
            character = _common_character(
                _ANY_CHARACTER if left_star else left[i], _ANY_CHARACTER if right_star else right[j]
            )
            if character is not None:
                moves.append(((i if left_star else i + 1, j if right_star else j + 1), character))
        for target, character in moves:
            if target not in came_from:
                came_from[target] = (state, character)
                queue.append(target)
    return None


def _common_window(first: RegisteredRun, second: RegisteredRun) -> tuple[datetime | None, datetime | None] | None:
    starts = [moment for moment in (first.start, second.start) if moment]
    ends = [moment for moment in (first.end, second.end) if moment]
    start, end = (max(starts) if starts else None), (min(ends) if ends else None)
    if start and end and end <= start:
        return None
    return start, end


def registry_overlaps(runs: list[RegisteredRun]) -> list[Overlap]:
    """Every pair of entries with a resource id and a moment in common (first witness per pair)."""
    found = []
    for first, second in combinations(runs, 2):
        window = _common_window(first, second)
        if window is None:
            continue
        for first_pattern in first.resources:
            witness = next(
                (
                    (pattern, example)
                    for pattern in second.resources
                    if (example := common_match(first_pattern, pattern)) is not None
                ),
                None,
            )
            if witness:
                found.append(Overlap(first, second, first_pattern, witness[0], witness[1], *window))
                break
    return found


def contradictions(runs: list[RegisteredRun], rules: list[SharedRule]) -> list[str]:
    """Configuration that contradicts the registry: fixed shared-cost weights for unregistered runs."""
    if not runs:
        return []
    known = {run.id for run in runs}
    return [
        f"contradiction: attribution.shared[{index}].weights: {run_id} is not in the run registry "
        "(its share is attributed to that id all the same)"
        for index, rule in enumerate(rules)
        for run_id in (rule.weights or {})
        if run_id not in known
    ]
