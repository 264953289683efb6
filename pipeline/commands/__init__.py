"""CLI subcommands, one module each (see pipeline.cli)."""
