"""JetStream replicated across separate server processes started from flags, on both targets (fixtures in conftest.py)."""
