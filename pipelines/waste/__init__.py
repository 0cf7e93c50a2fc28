"""Waste and badput: the waste analysis of attributed spend."""
