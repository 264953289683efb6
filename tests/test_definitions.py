import re

import dagster as dg
import lxml.html

from pipeline.sources.registry import load_registry


def test_definitions_load_with_one_raw_asset_per_source(settings):
    from pipeline.dagster.graph import build_definitions

    defs = build_definitions(settings)
    graph = defs.resolve_asset_graph()
    sources = load_registry(settings.registry)
    raw_keys = {key for key in graph.get_all_asset_keys() if key.path[-1].startswith("raw_")}
    assert len(raw_keys) == len(sources) + 2  # and raw_inventory, raw_fetch
    assert graph.get(dg.AssetKey("raw_inventory")).group_name == "raw"
    node = graph.get(dg.AssetKey("raw_cloudflare_workers_ai"))
    assert node.group_name == "raw"
    assert node.freshness_policy is None  # freshness is the `fresh` check (tests/test_freshness)
    defs.resolve_implicit_global_asset_job_def()  # the graph is executable as one job


def test_code_location_module_exposes_defs():
    from pipeline import definitions

    assert isinstance(definitions.defs, dg.Definitions)


def _rendered(markdown: str) -> tuple[str, list[str]]:
    """What Dagster's Markdown shows of a description (CommonMark, as the UI renders it): its
    text, and any raw HTML it would swallow."""
    from markdown_it import MarkdownIt

    tokens = MarkdownIt("commonmark").parse(markdown)
    inline = [child for token in tokens for child in (token.children or [])]
    swallowed = [t.content for t in (*tokens, *inline) if t.type.startswith("html")]
    html = MarkdownIt("commonmark").render(markdown)
    return " ".join(
        lxml.html.fragment_fromstring(html, create_parent="div").text_content().split()
    ), swallowed


def test_descriptions_keep_their_placeholders_when_dagster_renders_them(settings):
    from pipeline.dagster.graph import build_definitions

    graph = build_definitions(settings).resolve_asset_graph()
    descriptions = {
        key.to_user_string(): graph.get(key).description for key in graph.get_all_asset_keys()
    }
    descriptions |= {
        str(key): graph.get_check_spec(key).description for key in graph.asset_check_keys
    }
    for name, description in descriptions.items():
        if not description:
            continue
        shown, swallowed = _rendered(description)
        assert swallowed == [], name
        # every character the description means is shown: the escapes, and only they, go
        assert shown == " ".join(re.sub(r"\\(.)", r"\1", description).split()), name
    assert (
        "Publishes exports/<version>/ and switches exports/latest"
        in _rendered(descriptions["out_release"])[0]
    )
    assert "/models/<slug>/providers" in _rendered(descriptions["staging_aa_provider_page"])[0]
