"""The demo's GCP billing: a training and a sandbox project on one billing account, exported as
the detailed (resource-level) billing export."""
