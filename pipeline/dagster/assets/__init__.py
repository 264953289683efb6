"""Dagster wiring. Modules here import Dagster and call plain functions; they hold no logic that
a test would want to call without Dagster."""
