"""Waste and badput (SPEC §12): run events and the waste analysis of attributed spend."""
