"""Table definitions: one Pandera model per frame or table, the single source of truth from which
validation, asset checks, DuckDB DDL and column comments are all derived."""
