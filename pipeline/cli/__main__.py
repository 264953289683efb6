"""`python -m pipeline.cli` runs the `speedbook` command line."""

from pipeline.cli import run

run()
