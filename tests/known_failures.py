# ruff: noqa: E501  (test ids and their reasons, one per line, are data)
"""End-to-end tests that fail on main for a reason not yet fixed, each with that reason: marked
xfail (not strict) by conftest so the rest of the tier still guards CI. Every entry is an open
defect named in the issue notes; fix it and remove the line (a passing test is reported XPASS)."""

KNOWN_FAILURES: dict[str, str] = {
    "tests/test_bit_rot.py::test_a_same_size_edit_with_the_old_mtime_moves_latest_off_its_release": (
        "read inference.json's 1.x 'live_figures' (fixed on main, not yet confirmed by a run)"
    ),
    "tests/test_bit_rot.py::test_a_data_file_replaced_by_a_link_to_dev_zero_after_it_was_read": (
        "read inference.json's 1.x 'live_figures' (fixed on main, not yet confirmed by a run)"
    ),
    "tests/test_failure_safety.py::test_a_build_killed_mid_transaction_loses_nothing[staging-batch]": (
        "read inference.json's 1.x 'live_figures' (fixed on main, not yet confirmed by a run)"
    ),
    "tests/test_failure_safety.py::test_a_build_killed_mid_transaction_loses_nothing[core-transaction]": (
        "read inference.json's 1.x 'live_figures' (fixed on main, not yet confirmed by a run)"
    ),
    "tests/test_failure_safety.py::test_fetched_snapshots_are_used_by_the_next_build": (
        "read inference.json's 1.x 'live_figures' (fixed on main, not yet confirmed by a run)"
    ),
    "tests/test_build_summary.py::test_a_failed_build_says_what_failed_and_the_fix_in_a_few_lines[failed check]": (
        "the summary's wording after a committed core (fixed on main, not yet confirmed by a run)"
    ),
    "tests/test_build_summary.py::test_a_failed_build_says_what_failed_and_the_fix_in_a_few_lines[export schema]": (
        "the summary's wording after a committed core (fixed on main, not yet confirmed by a run)"
    ),
    "tests/test_bench_smoke.py::test_the_poll_scenario_runs_at_a_tiny_size": (
        "the store's bytes against the history's: the comparison's expectation is not yet settled"
    ),
    "tests/test_beyond_one_machine.py::test_a_scheduled_run_fetches_into_s3_builds_on_postgresql_and_s3_and_publishes_to_s3": (
        "passes alone; in an xdist worker whose forkserver started before the test set SPEEDBOOK_DAGSTER_STORAGE, the run's steps lack it"
    ),
}
