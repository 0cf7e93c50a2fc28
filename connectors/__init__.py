"""Source clients for billing exports. No Dagster imports here."""
