import dagster as dg

from pipeline.sources.registry import load_registry


def test_definitions_load_with_one_raw_asset_per_source(settings):
    from pipeline.dagster.graph import build_definitions

    defs = build_definitions(settings)
    graph = defs.resolve_asset_graph()
    sources = load_registry(settings.registry)
    raw_keys = {key for key in graph.get_all_asset_keys() if key.path[-1].startswith("raw_")}
    assert len(raw_keys) == len(sources) + 1  # and raw_inventory
    assert graph.get(dg.AssetKey("raw_inventory")).group_name == "raw"
    node = graph.get(dg.AssetKey("raw_cloudflare_workers_ai"))
    assert node.group_name == "raw"
    assert node.freshness_policy is None  # freshness is the `fresh` check (tests/test_freshness)
    defs.resolve_implicit_global_asset_job_def()  # the graph is executable as one job


def test_code_location_module_exposes_defs():
    from pipeline import definitions

    assert isinstance(definitions.defs, dg.Definitions)
