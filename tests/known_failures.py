# ruff: noqa: E501  (test ids and their reasons, one per line, are data)
"""End-to-end tests that fail on main for a reason not yet fixed, each with that reason: marked
xfail (not strict) by conftest so the rest of the tier still guards CI. Every entry is an open
defect named in the issue notes; fix it and remove the line (a passing test is reported XPASS)."""

KNOWN_FAILURES: dict[str, str] = {
    "tests/test_bit_rot.py::test_a_data_file_replaced_by_a_link_to_dev_zero_after_it_was_read": (
        "xfailed in the full tier of 2026-12-06 (load 10-20), maybe while the worktree's exports.py "
        "was briefly broken (its build is a subprocess); not rerun alone, not diagnosed; the old "
        "reason ('live_figures') cannot be it: the test reads no export figure"
    ),
}
