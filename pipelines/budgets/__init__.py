"""Budget baselines, the pre-training resource model and the variance of actual spend against it."""
