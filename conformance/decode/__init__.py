"""(module map: see below)."""
