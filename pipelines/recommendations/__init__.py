"""Recommendations: what to do next, with the saving each action would have brought."""
