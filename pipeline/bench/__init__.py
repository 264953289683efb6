"""Benchmarking the build: a synthetic corpus in the real formats, at any size."""
