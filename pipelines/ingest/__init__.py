"""Ingest: billing exports normalized onto FOCUS 1.2 and loaded into `focus_line_items`."""
