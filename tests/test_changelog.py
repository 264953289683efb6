"""The changelog's pure functions on a real release of the bundled corpus, edited the way a
later release would differ from it."""

from __future__ import annotations

import copy

import lxml.html
import pytest

import pipeline.release.changelog as changelog
from pipeline.release.changelog import (
    compare,
    figure_text,
    relative_change,
    render_markdown,
    summary_line,
)
from pipeline.release.contract.common import Variant
from pipeline.release.jsonio import dumps
from pipeline.release.publish import read_release
from pipeline.release.templates import escape_markdown, markdown_table

GROQ_LLAMA = "groq/llama-3.3-70b-instruct/unknown/standard/-"


@pytest.fixture(scope="module")
def release(built) -> dict:
    return read_release(built.exports / "latest")


@pytest.fixture
def later(release) -> dict:
    documents = copy.deepcopy(release)
    documents["inference.json"]["version"] = "2026.11.30"
    return documents


def provider(documents: dict, provider_id: str) -> dict:
    return next(p for p in documents["inference.json"]["providers"] if p["id"] == provider_id)


def groq_llama(documents: dict) -> dict:
    return next(
        f
        for f in provider(documents, "groq")["figures"]
        if f["model"]["id"] == "llama-3.3-70b-instruct"
        and f["metric"] == "output_tokens_per_s"
        and f["source"].startswith("aa-")
    )


def test_a_release_compared_with_itself_has_no_changes(release):
    changes = compare(release, release)
    assert not changes["figures"]["changed"] and not changes["headlines"]
    assert summary_line(changes) == "no content changed"
    assert "no content changed" in render_markdown(changes)


def test_the_first_release_counts_what_it_holds(release):
    changes = compare(None, release)
    assert changes["first_release"] and changes["from"] is None
    assert changes["contents"]["providers"] == len(release["inference.json"]["providers"])
    assert changes["contents"]["catalogue_entries"] == 75
    providers = len(release["inference.json"]["providers"])
    assert summary_line(changes).startswith(f"first release: {providers} providers")
    assert "This is the first release" in render_markdown(changes)


def test_a_changed_figure_has_old_and_new_value_and_relative_change(release, later):
    groq_llama(later)["value"] = 330.0
    changes = compare(release, later)
    [figure] = changes["figures"]["changed"]
    assert figure["endpoint"] == GROQ_LLAMA
    assert (figure["old"]["value"], figure["new"]["value"]) == (321.0, 330.0)
    assert figure["relative_change"] == pytest.approx(9 / 321, abs=1e-4)
    assert summary_line(changes) == "figures: 1 changed"
    # an approximate figure (a reconstruction's) is written with its ~, escaped in markdown
    assert "| \\~321.0 tokens/s | \\~330.0 tokens/s | +2.8% |" in render_markdown(changes)


def test_a_figure_observed_again_with_the_same_value_is_not_a_change(release, later):
    groq_llama(later)["observed_at"] = "2026-11-30T00:00:00Z"
    changes = compare(release, later)
    assert changes["figures"]["changed"] == []
    assert changes["figures"]["reobserved_unchanged"] == 1
    assert summary_line(changes) == "no figure changed (1 figure re-observed)"


def test_a_bound_against_a_point_figure_has_no_relative_change(release, later):
    figure = groq_llama(later)
    figure["qualifier"] = "at_least"
    changes = compare(release, later)
    [changed] = changes["figures"]["changed"]
    assert changed["relative_change"] is None
    assert figure_text(changed["new"]) == "≥321.0 tokens/s"


def test_newly_stale_figures_and_headline_changes(release, later):
    groq = provider(later, "groq")
    groq_llama(later)["stale"] = True
    assert not groq["headline"]["stale"]  # the probe median of the bundled release, fresh
    groq["headline"]["stale"] = True
    groq["headline"]["display"] = groq["headline"]["display"].replace("as of", "stale, as of")
    changes = compare(release, later)
    assert [f["endpoint"] for f in changes["stale"]["newly_stale"]] == [GROQ_LLAMA]
    assert changes["figures"]["changed"] == []  # the value did not move
    [headline] = changes["headlines"]
    assert headline["provider"]["id"] == "groq" and headline["new"]["stale"]
    text = render_markdown(changes)
    assert "## Newly stale figures" in text and "| now stale |" in text
    assert "| fresh again |" in render_markdown(compare(later, release))
    assert compare(later, release)["stale"]["fresh_again"][0]["endpoint"] == GROQ_LLAMA


def test_providers_models_platforms_and_catalogue_entries_added_and_removed(release, later):
    inference = later["inference.json"]
    inference["providers"] = [p for p in inference["providers"] if p["id"] != "baseten"]
    later["model_platforms.json"]["platforms"].pop(0)
    task = later["inference_catalog.json"]["tasks"][0]
    removed_entry = task["models"].pop(0)
    task["models"][0]["function_calling"] = not task["models"][0]["function_calling"]
    changes = compare(release, later)
    assert [p["id"] for p in changes["providers"]["removed"]] == ["baseten"]
    removed = [f["endpoint"].split("/")[0] for f in changes["figures"]["removed"]]
    assert removed == ["baseten"] * len(provider(release, "baseten")["figures"])
    assert [p["id"] for p in changes["platforms"]["removed"]] == ["amazon-bedrock"]
    assert [e["id"] for e in changes["catalogue"]["removed"]] == [removed_entry["id"]]
    [entry] = changes["catalogue"]["changed"]
    assert [c["field"] for c in entry["changes"]] == ["function_calling"]
    back = compare(later, release)
    assert [p["id"] for p in back["providers"]["added"]] == ["baseten"]
    assert back["catalogue"]["added"][0]["task"] == task["name"]


def test_a_source_tier_change_is_reported(release, later):
    def retier(value: object) -> None:
        if isinstance(value, dict):
            if value.get("id") == "agentfieldbook-inference" and "tier" in value:
                value["tier"] = "T1"
            for child in value.values():
                retier(child)
        elif isinstance(value, list):
            for child in value:
                retier(child)

    retier(later)
    changes = compare(release, later)
    [source] = changes["sources"]["tier_changed"]
    assert source["id"] == "agentfieldbook-inference"
    assert source["changes"] == [{"field": "tier", "old": "T2", "new": "T1"}]
    assert "1 source tier changed" in summary_line(changes)


CATALOGUE_SOURCE = "cloudflare-workers-ai"


def recapture(documents: dict, source_id: str, stamp: str = "20261130T000000Z") -> str:
    """The documents as a re-capture of `source_id` would leave them: the same figures, cited
    from another snapshot. Returns the new snapshot id."""
    new_id = ""

    def walk(value: object) -> None:
        nonlocal new_id
        if isinstance(value, dict):
            for key in ("id", "snapshot"):
                text = value.get(key)
                if isinstance(text, str) and text.startswith(f"{source_id}/"):
                    new_id = f"{source_id}/{stamp}-{text.rsplit('-', 1)[1]}"
                    value[key] = new_id
            for child in value.values():
                walk(child)
        elif isinstance(value, list):
            for child in value:
                walk(child)

    walk(documents)
    assert new_id, f"{source_id} is not cited"
    return new_id


def test_a_recaptured_snapshot_with_the_same_content_is_not_no_change(release, later):
    """A re-captured catalogue changes only the snapshot the release cites: a new release must
    not say "no content changed"."""
    [old_id] = [
        s["id"]
        for s in later["inference_catalog.json"]["snapshots"]
        if s["source"] == CATALOGUE_SOURCE
    ]
    new_id = recapture(later, CATALOGUE_SOURCE)
    changes = compare(release, later)
    assert changes["figures"]["changed"] == [] and changes["catalogue"]["changed"] == []
    [changed] = changes["snapshots"]["changed"]
    assert changed["source"] == CATALOGUE_SOURCE
    assert [s["id"] for s in changed["old"]] == [old_id]
    assert [s["id"] for s in changed["new"]] == [new_id]
    assert changes["snapshots"]["added"] == changes["snapshots"]["removed"] == []
    assert summary_line(changes) == "no figure changed; 1 cited snapshot changed"
    text = render_markdown(changes)
    assert "## Cited snapshots changed" in text
    assert f"| {CATALOGUE_SOURCE} | {old_id} | {new_id} |" in text
    assert "no content changed" not in text


def test_provenance_is_counted_beside_other_changes(release, later):
    figure = groq_llama(later)
    figure["observed_at"] = "2026-11-30T00:00:00Z"
    recapture(later, figure["source"])
    changes = compare(release, later)
    assert summary_line(changes) == (
        "no figure changed (1 figure re-observed); 1 cited snapshot changed"
    )
    figure["value"] = 330.0
    assert summary_line(compare(release, later)) == "figures: 1 changed; 1 cited snapshot changed"


def test_snapshots_of_sources_cited_by_one_release_only_are_added_or_removed(release, later):
    catalog = later["inference_catalog.json"]
    cited = [s for s in catalog["snapshots"] if s["source"] == CATALOGUE_SOURCE]
    other = copy.deepcopy(cited[0]) | {"source": "cloudflare-extra", "id": "cloudflare-extra/x"}
    catalog["snapshots"].append(other)
    changes = compare(release, later)
    assert changes["snapshots"]["added"] == [other] and changes["snapshots"]["changed"] == []
    assert summary_line(changes) == "no figure changed; 1 cited snapshot added"
    assert "## Cited snapshots added" in render_markdown(changes)
    back = compare(later, release)
    assert back["snapshots"]["removed"] == [other]
    assert summary_line(back) == "no figure changed; 1 cited snapshot removed"


def test_the_summary_of_a_changes_json_without_provenance_still_reads(release, later):
    """changes.json written before cited snapshots were compared has no "snapshots" key."""
    groq_llama(later)["value"] = 330.0
    changes = compare(release, later)
    del changes["snapshots"]
    assert summary_line(changes) == "figures: 1 changed"
    # an approximate figure (a reconstruction's) is written with its ~, escaped in markdown
    assert "| \\~321.0 tokens/s | \\~330.0 tokens/s | +2.8% |" in render_markdown(changes)


def test_text_from_the_data_cannot_break_the_markdown_tables(release, later):
    groq = provider(later, "groq")
    groq["name"] = "Groq | Inc\nnew line"
    groq_llama(later)["value"] = 330.0
    text = render_markdown(compare(release, later))
    row = next(line for line in text.splitlines() if "330.0 tokens/s" in line)
    assert row.startswith("| Groq \\| Inc new line | Llama 3.3 70B |")


def _records_reversed(value):
    """The same document with every list of records (providers, figures, snapshots...) in
    reverse order; lists of plain values keep their order, which can carry meaning."""
    if isinstance(value, dict):
        return {key: _records_reversed(item) for key, item in value.items()}
    if isinstance(value, list):
        items = [_records_reversed(item) for item in value]
        return items[::-1] if items and all(isinstance(i, dict) for i in items) else items
    return value


def test_changes_do_not_depend_on_the_order_of_records(release, later):
    groq_llama(later)["value"] = 330.0
    assert dumps(compare(release, later)) == dumps(compare(release, _records_reversed(later)))
    assert dumps(compare(release, later)) == dumps(compare(_records_reversed(release), later))


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [(322.0, 321.0, -0.0031), (100, 150, 0.5), (0, 5, None), (None, 5, None), (True, 2, None)],
)
def test_relative_change(old, new, expected):
    assert relative_change(old, new) == expected


HOSTILE_MARKDOWN = (
    "[x](javascript:alert(1))",
    "![p](https://tracker.example/p.png)",
    "<img src=x onerror=alert(1)>",
    "**bold** _em_ `code` ~~struck~~ &amp; $x$",
    "<https://tracker.example/auto>",
)


def test_markdown_from_the_data_stays_text_in_the_changelog(release, later):
    """Catalogue ids, names and publishers from a source are Markdown-escaped in every cell: a
    Markdown renderer shows them as written, with no link, image, HTML or emphasis."""
    from markdown_it import MarkdownIt

    task = later["inference_catalog.json"]["tasks"][0]
    entries = task["models"][: len(HOSTILE_MARKDOWN)]
    for entry, text in zip(entries, HOSTILE_MARKDOWN, strict=True):
        entry["id"] = text
        entry["name"] = text
    html = MarkdownIt("commonmark").enable("table").render(render_markdown(compare(release, later)))
    root = lxml.html.fragment_fromstring(html, create_parent="div")
    assert root.xpath("//a|//img|//em|//strong|//code|//s|//del") == []
    cells = [" ".join(td.text_content().split()) for td in root.xpath("//td")]
    for text in HOSTILE_MARKDOWN:
        assert text in cells, text  # shown exactly as the source wrote it


@pytest.mark.parametrize(
    ("value", "written"),
    [
        ("output_tokens_per_s", "output_tokens_per_s"),  # intraword _ opens no emphasis
        (
            "groq/llama-3.3-70b-instruct/unknown/standard/-",
            "groq/llama-3.3-70b-instruct/unknown/standard/-",
        ),
        (
            "_em_ *b* [l](u) ![i](u) <t> &a `c` ~s~ $m$ a|b \\",
            r"\_em\_ \*b\* \[l\](u) !\[i\](u) \<t> \&a \`c\` \~s\~ \$m\$ a\|b \\",
        ),
        ("two\nlines", "two lines"),
        (None, "—"),
        (True, "yes"),
        (17, "17"),
    ],
)
def test_escape_markdown(value, written):
    assert escape_markdown(value) == written


def test_a_table_escapes_every_cell_and_tells_equal_values_of_other_types_apart():
    """Tables are written cell by cell in Python (templates.table_text), each distinct value
    escaped once: True and 1, or 1 and 1.0, are still written as themselves."""
    rows = [[True, 1, 1.0, None], ["a|b", ["x"], "a|b", False], [1, True, "_e_", 0]]
    assert markdown_table(["h|1", "h2", "h3", "h4"], rows) == [
        r"| h\|1 | h2 | h3 | h4 |",
        "|---|---|---|---|",
        "| yes | 1 | 1.0 | — |",
        r"| a\|b | \['x'\] | a\|b | no |",
        r"| 1 | yes | \_e\_ | 0 |",
        "",
    ]
    assert markdown_table([], []) == ["|  |", "|", ""]


def test_a_figure_s_variant_in_the_changelog_is_the_contract_s_json_of_it():
    """The changelog spells a variant out field by field (pydantic's dump per figure was a tenth
    of its time): a field added to the contract's Variant must appear here too."""
    full = Variant(
        precision="fp8",
        service_tier="turbo",
        reasoning_effort="high",
        region="eu-west-1",
        key="fp8",
    )
    bare = Variant(
        precision="unknown", service_tier="standard", reasoning_effort=None, region=None, key=None
    )
    for variant in (full, bare):
        assert changelog._variant(variant) == variant.model_dump(mode="json")
    assert list(changelog._variant(full)) == list(Variant.model_fields)


def test_a_figure_turning_suspect_is_a_change(release, later):
    groq_llama(later)["suspect"] = True
    groq_llama(later)["suspect_reason"] = "its own fields disagree"
    changes = compare(release, later)
    [changed] = changes["figures"]["changed"]
    assert (changed["old"]["suspect"], changed["new"]["suspect"]) == (False, True)


def test_a_hostile_or_malformed_release_is_named_not_compared(release):
    broken = copy.deepcopy(release)
    broken["inference.json"]["providers"][0]["figures"][0]["value"] = "fast"
    with pytest.raises(changelog.UnreadableRelease, match=r"inference\.json at providers\.0"):
        compare(release, broken)
    broken = copy.deepcopy(release)
    broken["inference.json"]["sources"] = "everything"
    with pytest.raises(changelog.UnreadableRelease, match="sources"):
        compare(broken, release)
    with pytest.raises(changelog.UnreadableRelease, match="missing"):
        compare({"inference.json": release["inference.json"]}, release)
