"""The benchmark at a tiny size, as a smoke test: it must run end to end and report every
figure the README quotes. No timing is asserted here (tests stay fast and the machine is shared)."""

import json

REQUIRED = {
    "pages", "observations", "full_build_s", "incremental_build_s", "noop_build_s",
    "extract_pages_per_s", "floor_parse_pages_per_s", "peak_rss_mib", "latest_query_s",
}


def test_bench_runs_at_a_small_size(cli, tmp_path):
    output = tmp_path / "bench.json"
    result = cli("bench", "--models", "5", "--providers", "3", "--days", "3", "--json", str(output))
    assert result.status == 0, result.err
    figures = json.loads(output.read_text())
    assert REQUIRED <= set(figures)
    assert figures["pages"] == 15 and figures["incremental_pages"] == 5
    assert figures["statuses"] == [0, 0, 0]
    assert figures["noop_skipped"] is True
    # every page's endpoints became observations: 5 models x 4 days x 3 endpoints, plus the
    # compilation's figures
    assert figures["observations"] >= 5 * 3 * 3
    assert "full build" in result.out and "lxml.html alone" in result.out


def test_bench_refuses_a_bad_size(cli):
    result = cli("bench", "--models", "0")
    assert result.status == 2 and "at least 1" in result.err
