"""The replicated log (fakejs.jetstream.raft): codec, stores, a simulated network of nodes, safety properties."""
