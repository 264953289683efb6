"""Speedbook: a versioned, source-graded dataset of LLM inference speed and model access."""

__version__ = "0.1.0"
