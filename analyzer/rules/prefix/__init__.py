"""Prediction rules for `analyze prefix`: how each kind of endpoint reuses a cached prefix (parameters as data)."""
