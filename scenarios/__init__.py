"""The shipped fault scenarios (TOML), installed as the ``fakejs.scenarios`` package so they are found by name."""
