"""Attribution of every line item to a training run, or explicitly to nobody."""
