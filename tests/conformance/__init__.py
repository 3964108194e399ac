"""Client programs for ``fakejs conformance run`` (each runnable as a script), and the contract they read."""
