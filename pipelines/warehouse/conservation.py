"""Conservation: what a run proves about money at every step."""


class ConservationError(RuntimeError):
    """Loaded or allocated money differs from the raw export's control total; nothing was replaced."""
