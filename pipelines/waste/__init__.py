"""Waste and badput: run events and the waste analysis of attributed spend."""
