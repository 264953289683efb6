"""The identity rules on the real captures: every model and provider label the bundled corpus
stages (Artificial Analysis's API, 525 models; OpenRouter's catalogue, 364; models.dev, 5,258
offers and 3,876 of March; Cloudflare; Azure Foundry; LLMPerf; the pages) and OpenRouter's July
2026 catalogue (344 models, a poll the rules were not written from), resolved as a build
resolves them (labels.resolve_uses, via identity_corpus.py).

The classes, not only the examples: every Artificial Analysis model OpenRouter names by a stable
key lands on its id; every models.dev `base_model` link holds; no two labels on one id write
different sizes or dates; the near-duplicate ids of the corpus fall from 266 groups (720 ids)
before the rules to at most 60 (134 ids), most of them models that are really apart.
"""

from __future__ import annotations

import gzip
import json
import re
import tomllib
from collections import defaultdict
from datetime import UTC, datetime

import pandas as pd
import pytest
from identity_corpus import (
    FRONTEND_CATALOGUE,
    corpus_frames,
    corpus_resolutions,
    measure,
    model_ids,
    near_duplicate_groups,
)
from test_parse_support import FIXTURES

from pipeline.normalise.identity import model_identity

AA = "artificial-analysis-api"
MAY_CATALOGUE = "openrouter/api-v1-models-2026-05.json"


@pytest.fixture(scope="module")
def table() -> pd.DataFrame:
    return corpus_resolutions()


@pytest.fixture(scope="module")
def models(table: pd.DataFrame) -> dict[tuple[str, bool], dict[str, object]]:
    rows = table[table["kind"] == "model"].to_dict("records")
    return {(str(row["label"]), bool(row["stable"])): row for row in rows}


def model(
    models: dict[tuple[str, bool], dict[str, object]], label: str, stable: bool = True
) -> dict[str, object]:
    return models[(label, stable)]


@pytest.mark.e2e
def test_the_issues_examples(models):
    # one model, many spellings: Artificial Analysis, OpenRouter, Cloudflare and Bedrock
    llama = {
        model(models, label)["entity_id"]
        for label in (
            "Llama 3.3 Instruct 70B",
            "meta-llama/llama-3.3-70b-instruct",
            "@cf/meta/llama-3.3-70b-instruct-fp8-fast",
            "meta.llama3-3-70b-instruct-v1:0",
        )
    }
    assert llama == {"llama-3.3-70b-instruct"}  # the reviewed entity
    assert model(models, "Llama 3.3 Instruct 70B")["rule"].startswith("identity key of reviewed")
    # efforts are variants of one model, not models of their own
    minimal, low, plain = (
        model(models, x) for x in ("GPT-5 (minimal)", "GPT-5 (low)", "openai/gpt-5")
    )
    assert minimal["entity_id"] == low["entity_id"] == plain["entity_id"] == "gpt-5"
    assert (minimal["reasoning_effort"], low["reasoning_effort"]) == ("minimal", "low")
    # a dated name is a snapshot of its own, in its family; one its slug pins joins the ids
    nov = model(models, "GPT-4o (Nov '24)")
    assert (nov["entity_id"], nov["family"]) == ("gpt-4o-2024-11", "gpt-4o")
    aug = {model(models, x)["entity_id"] for x in ("GPT-4o (Aug '24)", "openai/gpt-4o-2024-08-06")}
    assert aug == {"gpt-4o-2024-08-06"}
    # a region profile is a region of one model
    us, plain = (
        model(models, f"{prefix}anthropic.claude-sonnet-4-5-20250929-v1:0")
        for prefix in ("us.", "")
    )
    assert us["entity_id"] == plain["entity_id"] == "claude-sonnet-4.5-2025-09-29"
    assert us["region"] == "us" and pd.isna(plain["region"])
    assert us["family"] == "claude-sonnet-4.5"


@pytest.mark.e2e
def test_z_ai_and_zai_are_one_provider(table):
    providers = table[table["kind"] == "provider"].set_index("label")
    assert providers.loc["z-ai", "entity_id"] == providers.loc["zai", "entity_id"] == "z-ai"
    assert providers.loc["togetherai", "entity_id"] == "together-ai"  # models.dev's id
    assert providers.loc["novita-ai", "entity_id"] == "novita-ai"


@pytest.mark.e2e
def test_near_duplicate_ids_before_and_after():
    """The measure the issue quotes, on the bundled corpus and the July catalogue. Before the
    identity rules (every stable id under its own slug) the same labels gave 2,427 model ids,
    720 of them in 266 groups of near-duplicates; the groups left are mostly models that are
    apart (v2 and v4 of a fine-tune, grok-4 and grok-4-fast, gpt-4 and gpt-4-turbo)."""
    after = measure(model_ids(corpus_resolutions()))
    assert after.ids <= 1800
    assert after.groups <= 60 and after.grouped <= 134
    groups = near_duplicate_groups(model_ids(corpus_resolutions()))
    apart = {
        ("gpt-4", "gpt-4-turbo"),
        ("grok-4", "grok-4-fast"),
        ("claude-3.5-sonnet", "claude-3.5-sonnet-v2"),
    }
    assert apart <= {tuple(group) for group in groups}  # kept apart: they are other models


# Artificial Analysis models whose OpenRouter counterpart (by a stable key) sits elsewhere,
# and why: each is a naming the rules cannot decide, and none is a merge.
APART = {
    "Hy3-preview (Reasoning)": "AA names a preview, OpenRouter's id does not",
    "Mistral Large 2 (Jul '24)": "'Large 2' against mistral-large-2407: a version against a date",
    "Kimi K2": "OpenRouter's hugging_face_id says Kimi-K2-Instruct; AA's name says no instruct",
    "Kimi K2 0905": "the same, for Kimi-K2-Instruct-0905",
}


def _squash(text: str) -> str:
    return re.sub(r"[^a-z0-9]", "", text.casefold())


@pytest.mark.e2e
def test_artificial_analysis_models_named_by_openrouters_stable_keys_share_their_id(models):
    """Independent of the rules: an Artificial Analysis slug that is, letters and digits alike,
    the tail of an OpenRouter model's hugging_face_id or canonical_slug names that model. Each
    such pair lands on one id, or, where the AA name dates a snapshot the OpenRouter id does not
    (or the other way), in one family."""
    frames = corpus_frames()
    catalogue = frames["catalogue_entries"]
    catalogue = catalogue[catalogue["source_id"] == "openrouter"]
    named: dict[str, set[str]] = defaultdict(set)
    for row in catalogue.itertuples():
        for stable_key in (row.hugging_face_id, row.canonical_slug):
            if isinstance(stable_key, str):
                named[_squash(stable_key.rsplit("/", 1)[-1])].add(row.platform_model_id)
    joined, family, apart = 0, 0, set()
    for row in frames["aa_models"].drop_duplicates("name").itertuples():
        for counterpart in named.get(_squash(row.slug), ()):
            ours, theirs = model(models, row.name), model(models, counterpart)
            if ours["entity_id"] == theirs["entity_id"]:
                joined += 1
            elif (
                ours["family"] == theirs["family"]
                or theirs["entity_id"]
                in (
                    ours["family"],
                    model_identity(str(ours["entity_id"])).family,
                )
                or ours["entity_id"] == theirs["family"]
            ):
                family += 1
            else:
                apart.add(row.name)
    assert apart == set(APART)
    assert joined >= 90 and joined + family >= 100


def test_models_dev_base_model_links_hold():
    """models.dev's repository links a platform's offer to the model it serves (`base_model`):
    the offer's id and the base model's have one key."""
    checked = 0
    for path in sorted((FIXTURES / "models-dev" / "toml").glob("providers__*__models__*.toml")):
        document = tomllib.loads(path.read_text(encoding="utf-8"))
        offer = path.stem.split("__models__", 1)[1].replace("__", "/")
        if "base_model" not in document:
            continue
        assert model_identity(offer).key == model_identity(document["base_model"]).key, offer
        checked += 1
    assert checked == 4
    regional = model_identity("au.anthropic.claude-sonnet-4-6")  # the file without a link
    assert regional.region == "au"
    assert regional.key == model_identity("anthropic/claude-sonnet-4-6").key


_SIZE = re.compile(r"(?<![a-z0-9.])(\d+(?:\.\d+)?)b(?![a-z0-9])")
_DAY = re.compile(r"(?<!\d)(20\d\d)-?([01]\d)-?([0-3]\d)(?!\d)")


@pytest.mark.e2e
def test_no_two_labels_on_one_id_write_different_sizes_or_days(table):
    """An oracle apart from the rules: the parameter counts (70b, 1.5B) and the days
    (2024-11-20, 20241120) a label writes. Labels on one id never write different ones."""
    found: dict[str, dict[str, set[tuple[str, ...]]]] = defaultdict(lambda: defaultdict(set))
    for row in table[(table["kind"] == "model") & table["entity_id"].notna()].itertuples():
        text = str(row.label).casefold()
        sizes = tuple(sorted(set(_SIZE.findall(text))))
        days = tuple(sorted({"-".join(day) for day in _DAY.findall(text)}))
        if sizes:
            found[row.entity_id]["sizes"].add(sizes)
        if days:
            found[row.entity_id]["days"].add(days)
    clashes = {
        entity_id: written
        for entity_id, kinds in found.items()
        for name, written in kinds.items()
        if len(written) > 1
    }
    assert clashes == {}


def _catalogue(path: str) -> list[dict[str, object]]:
    raw = (FIXTURES / path).read_bytes()
    return json.loads(gzip.decompress(raw) if path.endswith(".gz") else raw)["data"]


AA_CAPTURED = datetime(2026, 5, 27, tzinfo=UTC).timestamp()


@pytest.mark.e2e
def test_an_unseen_poll_joins_as_well_as_the_captures_the_rules_were_written_from(table):
    """OpenRouter's July 2026 catalogue (344 models) was no input to the rules. Of its models
    that existed when Artificial Analysis was captured (2026-05-27), as large a share sits on an
    id Artificial Analysis also names as of the May catalogue (51%; before the rules, 27%)."""
    ids = table[(table["kind"] == "model") & table["stable"]].set_index("label")["entity_id"]
    models_ = table[table["kind"] == "model"]
    aa_ids = set(models_[models_["sources"].str.contains(AA)]["entity_id"])
    shares = {}
    for path in (MAY_CATALOGUE, FRONTEND_CATALOGUE.name):
        listed = _catalogue(path if path == MAY_CATALOGUE else f"openrouter/{path}")
        existed = [m["id"] for m in listed if float(m["created"]) < AA_CAPTURED]  # type: ignore[arg-type]
        shares[path] = sum(ids[model_id] in aa_ids for model_id in existed) / len(existed)
        assert len(existed) >= 300
    may, july = shares[MAY_CATALOGUE], shares[FRONTEND_CATALOGUE.name]
    assert may > 0.5 and july >= may - 0.03, shares


@pytest.mark.e2e
def test_every_effort_artificial_analysis_writes_is_read(table):
    aa = table[(table["kind"] == "model") & table["sources"].str.contains(AA)]
    written = aa[
        aa["label"].str.contains(
            r"\((?:[^()]*(?:reasoning|effort|high|low|medium|minimal))", case=False, regex=True
        )
    ]
    unread = written[written["reasoning_effort"].isna()]
    # non-reasoning at a stated effort: two settings, one dimension; kept in the name
    assert set(unread["label"]) == {
        "Claude Opus 4.6 (Non-reasoning, High Effort)",
        "Claude Opus 4.7 (Non-reasoning, High Effort)",
        "Claude Sonnet 4.6 (Non-reasoning, High Effort)",
        "Claude Sonnet 4.6 (Non-reasoning, Low Effort)",
    }
    assert len(written) - len(unread) >= 200
    # no id keeps a parenthesised effort as a model of its own
    read = written[written["reasoning_effort"].notna()]
    assert not read["entity_id"].str.contains(r"minimal|xhigh|non-reasoning").any()


@pytest.mark.e2e
def test_every_label_of_the_corpus_resolves_or_is_kept_under_a_valid_id(table):
    stable = table[table["stable"] & table["kind"].isin(["model", "provider"])]
    assert set(stable["status"]) <= {"resolved", "unreviewed"}
    assert stable["entity_id"].str.fullmatch(r"[a-z0-9]+(?:[-.][a-z0-9]+)*").all()
    # one id per key: no two unreviewed ids of one kind have the same identity key
    models_ = stable[(stable["kind"] == "model") & (stable["status"] == "unreviewed")]
    keys = {entity_id: model_identity(entity_id).key for entity_id in set(models_["entity_id"])}
    assert len(set(keys.values())) == len(keys)


def _sources_per_id(table: pd.DataFrame) -> dict[str, set[str]]:
    found: dict[str, set[str]] = defaultdict(set)
    for row in table[(table["kind"] == "model") & table["entity_id"].notna()].itertuples():
        found[row.entity_id].update(str(row.sources).split(", "))
    return found


@pytest.mark.e2e
def test_cloudflare_variants_land_on_their_model_with_their_variant(models):
    """Workers AI ids carry precision and speed suffixes: each lands on its model, the suffix
    read into the variant."""
    expected = {
        "@cf/meta/llama-3.1-8b-instruct": ("unknown", "standard"),
        "@cf/meta/llama-3.1-8b-instruct-awq": ("int4", "standard"),
        "@cf/meta/llama-3.1-8b-instruct-fp8": ("fp8", "standard"),
        "@cf/meta/llama-3.1-8b-instruct-fast": ("unknown", "fast"),
    }
    for label, variant in expected.items():
        row = model(models, label)
        assert row["entity_id"] == "llama-3.1-8b-instruct", label
        assert (row["precision"], row["service_tier"]) == variant, label


@pytest.mark.e2e
def test_platform_catalogues_join_the_other_sources(table):
    """Of the models Cloudflare's and Azure Foundry's catalogues list (69 and 24 ids), 48 and 22
    sit on an id another source names too (the rest are image, speech and embedding models no
    other source lists)."""
    per_id = _sources_per_id(table)
    for source, least in (("cloudflare-workers-ai", 48), ("azure-foundry-models-direct", 22)):
        ids = {
            row.entity_id
            for row in table[
                (table["kind"] == "model") & table["sources"].str.contains(source)
            ].itertuples()
        }
        joined = {entity_id for entity_id in ids if per_id[entity_id] - {source}}
        assert len(joined) >= least, (source, len(joined), len(ids))
    # xAI's own ids on Azure: the effort is read off the id, the model joins the others
    models_ = table[(table["kind"] == "model") & table["stable"]].set_index("label")
    fast = models_.loc["grok-4-fast-non-reasoning"]
    assert (fast["entity_id"], fast["reasoning_effort"]) == ("grok-4-fast", "none")
    assert AA in per_id["grok-4-fast"] and "openrouter" in per_id["grok-4-fast"]
