"""Normalise: raw names and numbers into canonical entities, variants and qualified values."""
