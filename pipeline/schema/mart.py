"""The mart's views and tables, documented once: their summaries and column descriptions, from
which the data dictionary (docs/data-dictionary.md) and the objects' comments are written. A
column not described here takes the description of its namesake in the core model the view
passes it through from (`inherits`: pipeline/schema/core.py), or the shared one
(pipeline/schema/ddl.py COMMON)."""

from __future__ import annotations

from dataclasses import dataclass, field

from pipeline.schema.vocabulary import (
    ENDPOINT_ID,
    METRICS,
    REASONING_EFFORTS,
    SCOPES,
    SERVICE_TIERS,
    TIERS,
)

# The vocabularies, named once here from pipeline/schema/vocabulary.py
SERVICE_TIER = f"variant: service tier ({', '.join(SERVICE_TIERS)})"
METRIC = f"{', '.join(METRICS[:-1])} or {METRICS[-1]}"
REASONING_EFFORT = (
    f"variant: reasoning effort ({', '.join(REASONING_EFFORTS)}); null when not stated"
)
TIER = f"tier of the figure's source: {', '.join(TIERS)}"
SCOPE = f"{', '.join(SCOPES)}: never compare across scopes"


@dataclass(frozen=True)
class MartView:
    summary: str
    columns: dict[str, str] = field(default_factory=dict)
    inherits: str | None = None  # a core table or view (CORE_TABLES, CORE_VIEWS)


# The core's own relations that no Pandera model describes: made from frames (the label
# resolutions, the reviewed claims, which format measures how) or by the core SQL (sql/core/).
CORE_RELATIONS: dict[str, MartView] = {
    "build_state": MartView(
        "One row: the as-of bound and data date of the last core build.",
        {
            "as_of": "the build's --as-of bound; null for every snapshot",
            "data_date": "the newest retrieval the build read: ages are measured from it",
        },
    ),
    "labels": MartView(
        (
            "Every label of the staged facts and how it resolved (pipeline/normalise/labels.py): "
            "to a reviewed entity, by an identity rule, to an unreviewed entity under a source's "
            "stable id, or not at all."
        ),
        {
            "label": "the label as the source writes it",
            "stable": "the label is a source's stable id (a slug, an id), not a name in prose",
            "status": "resolved, unreviewed (kept under the source's id) or unresolved",
            "entity_id": "the provider or model it resolved to; null when unresolved",
            "family": "for a model: the undated model a dated snapshot belongs to",
            "region": "a region profile the label names (Bedrock's us., eu.), a variant",
            "rule": "the alias or rule that decided",
            "suggestions": "close reviewed ids, for a reviewer (unresolved names only)",
            "held_back": "figures behind this unresolved name are held back from the release",
            "sources": "the sources whose facts use the label",
            "uses": "rows of the staged facts that use it",
        },
    ),
    "format_measurements": MartView(
        "How each format's figures are measured where its frames do not say (FormatSpec).",
        {
            "format": "the parser's format",
            "method": "how its figures are measured",
            "statistic": "the statistic its figures are",
            "window_minutes": "the window its statistics cover [minutes]",
        },
    ),
    "reviewed_claims": MartView(
        "The reviewed record claims (claims.toml) as the core reads them.",
        {
            "technique": "technique behind the figure, e.g. speculative decoding",
            "verified_by": "who measured it, if stated",
            "claimed": "year the claim was made",
            "figure_text": "the claim as the sources write it",
        },
    ),
    "platform_sources": MartView(
        "Which registered source lists which reviewed platform's models (platforms.toml).",
        {
            "catalogue_provider_id": "the provider's id in a catalogue of catalogues (models.dev)",
        },
    ),
    "build_scope": MartView(
        (
            "The snapshots the build reads: listed, retrieved up to its as-of time, read without "
            "error."
        ),
    ),
    "snapshot_grades": MartView(
        (
            "The tier and qualifier each snapshot's figures carry: a reconstruction carries the "
            "lower tier of its document and the qualifier its figures have there."
        ),
        {
            "retrieved_at_bound": "exact, or lower_bound when the capture time was not recorded",
            "qualifier": "the qualifier every figure of the snapshot carries (approx); null: none",
        },
    ),
}


MART_VIEWS: dict[str, MartView] = {
    "latest_snapshots": MartView(
        (
            "Per source: its newest snapshot retrieved up to the build's as-of time whose "
            "extraction succeeded (a damaged or unparseable newer snapshot is skipped). Sources "
            "without one have no row."
        ),
        {
            "source_id": "registry id of the source",
            "snapshot_id": "the snapshot the build reads the source from, <source_id>/<file>",
            "retrieved_at": "when that snapshot was retrieved",
            "url": "address the snapshot was retrieved from",
            "obtained_by": "bundled, fetched, manual or reconstructed",
            "reconstructed_from": (
                "for a reconstructed snapshot, the title of the document it was rebuilt from "
                "(core.snapshots); null otherwise"
            ),
            "is_newest": "it is also the source's newest snapshot of any extraction status",
            "newer_unusable": (
                "newer snapshots of the source skipped because their extraction failed or they "
                "are damaged"
            ),
            "retrieved_at_bound": (
                "exact, or lower_bound when retrieved_at is the earliest the capture can have been"
            ),
        },
    ),
    "source_freshness": MartView(
        (
            "Per source: its cadence, the snapshot it is read from (newest usable one up to the "
            "build's as-of time) and when a fetch last re-confirmed it."
        ),
        {
            "source_id": "registry id of the source",
            "max_age_minutes": "a figure older than this is stale [minutes]",
            "latest_snapshot_id": (
                "the snapshot the source is read from (mart.latest_snapshots); null when it has "
                "none"
            ),
            "latest_retrieved_at": "when that snapshot was retrieved",
            "confirmed_at": (
                "when a fetch last found that snapshot unchanged (HTTP 304 or the same bytes); "
                "null unless it is also the source's newest snapshot"
            ),
            "as_of": "the build's --as-of bound; null for every snapshot",
            "data_date": "the build's data date: ages are measured from it",
        },
    ),
    "observations_as_of": MartView(
        (
            "Observations retrieved up to the build's as-of time, with a stale flag against each "
            "source's cadence."
        ),
        {
            "fresh_as_of": (
                "observed_at, or later when a fetch re-confirmed the source's newest snapshot "
                "unchanged by the as-of time"
            ),
            "stale": (
                "a live median whose fresh_as_of is older than its source's cadence allows, "
                "measured from the build's data date"
            ),
        },
        inherits="observations",
    ),
    "current_observations": MartView(
        (
            "The current observation per endpoint, metric, scope, method and statistic: best "
            "tier, then newest (computed by each build from core.observations)."
        ),
        inherits="observations",
    ),
    "current_pairs": MartView(
        (
            "Pairs of current point figures from different sources on comparable endpoints, same "
            "metric and scope, observed within 7 days, with whether they are the same "
            "measurement, independent, and more than 10% apart; each pair in both orders."
        ),
        {
            "a_id": "side a in core.observations",
            "b_id": "side b in core.observations",
            "a_endpoint_id": "endpoint as side a states it",
            "b_endpoint_id": "endpoint as side b states it",
            "provider_id": "provider of both figures",
            "model_id": "model of both figures",
            "service_tier": "service tier of both figures",
            "a_precision": "precision as side a states it",
            "b_precision": "precision as side b states it",
            "a_reasoning_effort": "reasoning effort as side a states it",
            "b_reasoning_effort": "reasoning effort as side b states it",
            "unit": "unit of both figures",
            "a_quote": "side a as its source wrote it",
            "b_quote": "side b as its source wrote it",
            "metric": "metric of both figures",
            "scope": "scope of both figures",
            "a_source_id": "source of side a",
            "b_source_id": "source of side b (always another source)",
            "a_tier": "tier of side a's source",
            "b_tier": "tier of side b's source",
            "a_value": "figure of side a",
            "b_value": "figure of side b",
            "a_observed_at": "when side a was observed",
            "b_observed_at": "when side b was observed",
            "disagree": "the larger figure is more than 10% above the smaller",
            "region": "variant: region of a regional endpoint (the same on both sides)",
            "a_method": "how side a was measured",
            "b_method": "how side b was measured",
            "a_statistic": "side a's statistic (median, p50, ...)",
            "b_statistic": "side b's statistic",
            "same_measurement": (
                "both sides have the same method and statistic: only such figures corroborate or "
                "dispute each other"
            ),
            "independent": (
                "the sources are independent: different publishers, different lineage, and "
                "neither cites the other or the other's publisher"
            ),
            "a_window_minutes": "side a's window [minutes]",
            "b_window_minutes": "side b's window [minutes]",
        },
    ),
    "current_figures": MartView(
        (
            "The current figure per endpoint, metric, scope, method and statistic (tier first, "
            "then date), with the independent sources of the same measurement that corroborate or"
            " dispute it; computed by each build from mart.current_observations."
        ),
        {
            "corroborating_sources": (
                "how many other sources give a comparable figure within 10%, observed within 7 days"
            ),
            "corroborated_by": "those sources",
            "disputed_by": (
                "sources whose comparable figure differs by more than 10%, observed within 7 days"
            ),
            "source_url": "address of the snapshot",
            "fresh_as_of": (
                "observed_at, or the time a fetch last re-confirmed the figure's snapshot "
                "unchanged, whichever is later"
            ),
            "stale": (
                "the figure is older than its source's cadence allows, measured from the build's "
                "data date (a record claim never is)"
            ),
        },
        inherits="observations",
    ),
    "provider_headline": MartView(
        (
            "One headline figure per provider: its current T1 (else T2) central live output speed "
            "on its reference model (rule in docs/methodology.md)."
        ),
        {
            "reference_source_id": (
                "compilation whose newest headline names the provider's reference model; null "
                "without one"
            ),
            "reference_snapshot_id": "that compilation's snapshot",
            "on_reference": (
                "the figure is on the reference model (and on its variant, where the compilation "
                "states one)"
            ),
            "headline_rule": (
                "rule that picked it: reference model named by the newest compilation; fastest "
                "fresh T1 figure; stale: no fresh T1 figure"
            ),
            "fresh_as_of": (
                "observed_at, or the time a fetch last re-confirmed the figure's snapshot "
                "unchanged, whichever is later"
            ),
            "stale": (
                "the figure is older than its source's cadence allows, measured from the build's "
                "data date (a record claim never is)"
            ),
            "corroborating_sources": (
                "how many independent sources of the same measurement agree within 10% (within 7 "
                "days)"
            ),
            "corroborated_by": "those sources",
            "disputed_by": (
                "independent sources of the same measurement more than 10% apart (within 7 days)"
            ),
            "source_url": "address of the snapshot the figure comes from",
        },
        inherits="observations",
    ),
    "headline_context": MartView(
        (
            "Context figures the headline's compilation gives beside it: another model or class, "
            "a range across models."
        ),
        {
            "provider_id": "provider whose headline the figure stands beside",
            "figure_text": "as written, e.g. '≈800 t/s on 8B-class'",
            "value": "the figure; null for a range [tokens/s]",
            "low": "range low end [tokens/s]",
            "high": "range high end [tokens/s]",
            "qualifier": "approx, at_least, up_to, range; null when exact",
            "applies_to": "model class or scope",
            "model_id": "model, when the figure names one",
            "observed_at": "when the figure was observed",
            "snapshot_id": "the compilation's snapshot, <source_id>/<file>",
            "source_id": "the compilation",
            "tier": "tier of the compilation",
            "row_number": "row of the compilation's table",
        },
        inherits="context_figures",
    ),
    "endpoint_offers": MartView(
        (
            "Each endpoint's own newest listing (OpenRouter): prices in USD per million tokens, "
            "uptime over 5 minutes, 30 minutes and a day, limits, status; computed by each build."
        ),
        {
            "stale": (
                "the listing is older than its source's cadence allows, measured from the build's"
                " data date"
            ),
        },
        inherits="endpoint_offers",
    ),
    "leaderboard": MartView(
        (
            "Per model, variant and method, the providers ranked by current central (median or "
            "p50) live output speed (point figures; fresh before stale), with TTFT of the same "
            "method and price where known."
        ),
        {
            "model_id": "canonical model",
            "model_name": "model display name",
            "precision": "variant: precision, unknown when the source does not state it",
            "service_tier": SERVICE_TIER,
            "reasoning_effort": REASONING_EFFORT,
            "region": "variant: region of a regional endpoint; null for the default one",
            "method": "how the speed was measured (figures of different methods are ranked apart)",
            "statistic": "the statistic the source gives of the requests in the window (p50...)",
            "window_minutes": "the window the statistic covers [minutes]; null for a one-off run",
            "rank": (
                "1 = fastest within the model, variant, method and statistic; fresh figures rank "
                "before stale ones; ties share a rank; null for a suspect figure (listed last)"
            ),
            "provider_id": "inference provider",
            "provider_name": "provider display name",
            "endpoint_id": ENDPOINT_ID,
            "output_tokens_per_s": "current live median output speed [tokens/s]",
            "qualifier": (
                "approx when the source gives an approximate figure; null when exact (bounds and "
                "ranges are not ranked)"
            ),
            "ttft_s": (
                "current central time to first token of the same endpoint by the same method, "
                "where a source gives it [s]"
            ),
            "ttft_source_id": "source of ttft_s",
            "tier": TIER,
            "source_id": "source of the speed figure",
            "observed_at": "when the speed figure was observed",
            "stale": (
                "the speed figure is older than its source's cadence allows, measured from the "
                "build's data date"
            ),
            "corroborating_sources": (
                "how many independent sources of the same measurement agree within 10% (within 7 "
                "days)"
            ),
            "corroborated_by": "those sources",
            "disputed_by": (
                "independent sources of the same measurement whose figure differs by more than "
                "10% (within 7 days); see mart.disagreements"
            ),
            "source_url": "address of the snapshot the speed figure comes from",
            "snapshot_id": "raw snapshot of the speed figure, <source_id>/<file>",
            "observation_id": "the speed figure in core.observations",
            "endpoints_ranked": "how many endpoints the model, variant, method and statistic ranks",
            "ranking_rule": (
                "how the rank is given: within one model, variant, method and statistic; fresh "
                "first, then fastest; stale figures after every fresh one, suspect ones last"
            ),
            "observed_at_bound": (
                "exact, or lower_bound when observed_at is the earliest the figure can have been "
                "observed"
            ),
            "suspect": "the source's own fields contradict the figure (suspect_reason says how)",
            "suspect_reason": "which of the source's own fields contradict the figure",
        },
    ),
    "peak_vs_live": MartView(
        (
            "Every record claim found by the build's as-of time beside the live median on the "
            "same provider and model, and the fastest live median on that model, with their "
            "ratios."
        ),
        {
            "claim_id": "reviewed claim (pipeline/metadata/claims.toml)",
            "provider_id": "who the claim is about: provider or hardware vendor",
            "provider_name": "provider display name",
            "model_id": "canonical model the claim was measured on",
            "model_name": "model display name",
            "hardware": "hardware the claim names, e.g. Cerebras WSE-3",
            "scope": (
                "peak_per_user (best case, one stream) or aggregate (all users of a server "
                "together)"
            ),
            "figure_text": "the claim as the sources write it",
            "claim_value": "the claimed figure [tokens/s]",
            "qualifier": "approx or at_least as the sources write it; null when exact",
            "precision": "precision the claim states, unknown when not stated",
            "technique": "technique behind the figure, e.g. speculative decoding",
            "verified_by": "who measured it, if stated",
            "claimed": "year the claim was made",
            "claim_tier": "best tier among the sources carrying the claim",
            "claim_sources": "sources carrying the claim by the as-of time",
            "first_retrieved_at": "when a snapshot carrying the claim was first retrieved",
            "live_endpoint_id": (
                "the same provider's endpoint on the same model whose live median is shown; null "
                "when it has none"
            ),
            "live_observation_id": "the live figure in core.observations (mart.current_figures)",
            "live_value": (
                "that endpoint's current central (median or p50) live output speed (fresh first, "
                "then tier, then the headline's method preference, then newest) [tokens/s]"
            ),
            "live_tier": "tier of live_value's source",
            "live_source_id": "source of live_value",
            "live_observed_at": "when live_value was observed",
            "live_stale": "live_value is older than its source's cadence allows",
            "peak_to_live_ratio": (
                "claim_value / live_value: how far the per-user record sits above what the same "
                "provider sustains live on the model; null for aggregate claims and without a "
                "live figure"
            ),
            "notes": "reviewer's notes on the claim",
            "live_method": "how live_value was measured",
            "live_statistic": "live_value's statistic: median or p50 (central figures only)",
        },
    ),
    "platform_models": MartView(
        (
            "Which platform or catalogue offers which model, at which precision, from each "
            "catalogue's latest usable snapshot as of the build (mart.latest_snapshots)."
        ),
        {
            "platform_id": "model-access platform (pipeline/metadata/platforms.toml)",
            "platform_name": "platform display name",
            "platform_kind": "managed_cloud_catalogue, edge_hosted, gateway or model_choice_layer",
            "platform_model_id": "the platform's own id for the model",
            "listed_name": "the model's name as the catalogue lists it",
            "model_id": (
                "the model: reviewed where an alias or id matches, else unreviewed under the "
                "catalogue's id"
            ),
            "model_reviewed": (
                "model_id is a reviewed model (false: kept under the catalogue's id until a "
                "reviewer confirms it)"
            ),
            "model_name": "canonical model display name",
            "precision": "precision read from the listed name, unknown when it states none",
            "service_tier": "service tier read from the listed name",
            "task": "task the catalogue files the model under",
            "publisher": "who published the model, as the catalogue says",
            "function_calling": "the catalogue marks function calling",
            "beta": "the catalogue marks it beta",
            "lora": "the catalogue marks LoRA support",
            "context_window": "context window the catalogue states [tokens]",
            "price_input_usd_per_mtok": "input price the catalogue states [USD per 1M tokens]",
            "price_output_usd_per_mtok": "output price the catalogue states [USD per 1M tokens]",
            "planned_deprecation": "planned deprecation, as the catalogue writes it",
            "source_id": "catalogue source",
            "snapshot_id": (
                "the catalogue snapshot (the source's latest usable one), <source_id>/<file>"
            ),
            "source_url": "address of the snapshot",
            "observed_at": "when the catalogue was read",
            "price_cached_input_usd_per_mtok": "price per million cached input tokens [USD]",
            "other_prices": "prices in units not read as numbers, as the catalogue writes them",
        },
    ),
    "disagreements": MartView(
        (
            "Figures that independent sources dispute: comparable endpoints, the same metric, "
            "scope, method and statistic, observed within 7 days, more than 10% apart. One row "
            "per pair."
        ),
        {
            "region": "variant: region of a regional endpoint (the same on both sides)",
            "statistic": "the statistic both figures are (the same on both sides)",
            "provider_id": "provider both figures are about",
            "provider_name": "provider display name",
            "model_id": "model both figures are about",
            "model_name": "model display name",
            "precision": "variant: precision as either source states it, unknown when neither does",
            "service_tier": "variant: service tier (the same on both sides)",
            "reasoning_effort": "variant: reasoning effort as either source states it",
            "metric": METRIC,
            "scope": "live or one_off (the same on both sides)",
            "unit": "unit of both values",
            "a_value": "figure of side a (the better-tier source)",
            "b_value": "figure of side b",
            "relative_difference": (
                "(larger - smaller) / smaller: 0.25 means the larger figure is 25% above the "
                "smaller"
            ),
            "a_source_id": "source of a_value",
            "a_tier": "tier of a_source_id",
            "a_observed_at": "when a_value was observed",
            "b_source_id": "source of b_value",
            "b_tier": "tier of b_source_id",
            "b_observed_at": "when b_value was observed",
            "a_endpoint_id": "endpoint as side a states it",
            "b_endpoint_id": "endpoint as side b states it",
            "a_quote": "side a's figure as its source wrote it",
            "b_quote": "side b's figure as its source wrote it",
            "a_observation_id": "side a in core.observations",
            "b_observation_id": "side b in core.observations",
            "a_method": "how side a was measured",
            "b_method": "how side b was measured (the same kind of measurement as side a)",
        },
    ),
    "method_gaps": MartView(
        (
            "Pairs of central figures (median, p50) from independent sources on comparable "
            "endpoints whose methods differ and whose values are more than 10% apart: listed as a"
            " gap between methods, not as a dispute."
        ),
        {
            "relative_difference": "(larger - smaller) / smaller",
            "provider_id": "provider both figures are about",
            "model_id": "model both figures are about",
            "service_tier": "variant: service tier (the same on both sides)",
            "region": "variant: region of a regional endpoint (the same on both sides)",
            "metric": "the metric of both figures",
            "scope": "live (the same on both sides)",
            "unit": "unit of both values",
            "a_method": "how side a was measured (the first method by name)",
            "a_statistic": "side a's statistic: median or p50",
            "a_value": "side a's figure",
            "a_source_id": "source of a_value",
            "a_observed_at": "when a_value was observed",
            "a_endpoint_id": "endpoint as side a states it",
            "b_method": "how side b was measured",
            "b_statistic": "side b's statistic: median or p50",
            "b_value": "side b's figure",
            "b_source_id": "source of b_value",
            "b_observed_at": "when b_value was observed",
            "b_endpoint_id": "endpoint as side b states it",
            "a_observation_id": "side a in core.observations",
            "b_observation_id": "side b in core.observations",
        },
    ),
    "endpoint_stats": MartView(
        (
            "One row per endpoint x metric x statistic x snapshot: every live statistic with how "
            "it was measured (method, statistic, window), up to the build's as-of time."
        ),
        {
            "provider_name": "provider display name",
            "provider_reviewed": "the provider is reviewed (false: kept under a source's id)",
            "model_name": "model display name",
            "model_reviewed": "the model is reviewed (false: kept under a source's id)",
            "stale": (
                "the figure is older than its source's cadence allows, measured from the build's "
                "data date (a record claim never is)"
            ),
        },
        inherits="observations",
    ),
    "model_offers": MartView(
        (
            "One row per catalogue x platform or provider x model, from each catalogue's newest "
            "usable snapshot: the catalogue's own id, the model (reviewed or not), prices in USD "
            "per million tokens, context window, tool calling."
        ),
        {
            "source_id": "the catalogue source",
            "offered_by_kind": (
                "platform (a reviewed platform's own catalogue) or provider (a provider listed in"
                " a catalogue of catalogues, or an endpoint on OpenRouter)"
            ),
            "offered_by": "the platform or provider offering the model",
            "platform_id": (
                "the reviewed platform whose listing this is, where one is (platforms.toml)"
            ),
            "catalogue_model_id": (
                "the model's id in the catalogue (for an OpenRouter endpoint: model @ endpoint tag)"
            ),
            "listed_name": "the model as the catalogue names it",
            "model_id": (
                "the model: reviewed, or kept under the catalogue's id; null when the id names none"
            ),
            "model_name": "model display name",
            "model_reviewed": "the model is reviewed (false: kept under the catalogue's id)",
            "price_input_usd_per_mtok": "input price [USD per 1M tokens]",
            "price_output_usd_per_mtok": "output price [USD per 1M tokens]",
            "price_cache_read_usd_per_mtok": (
                "price of cached input tokens read [USD per 1M tokens], where listed"
            ),
            "price_cache_write_usd_per_mtok": (
                "price of input tokens written to the cache [USD per 1M tokens], where listed"
            ),
            "context_window": "context window [tokens]",
            "function_calling": "the catalogue marks tool calling",
            "snapshot_id": "the catalogue's newest usable snapshot",
            "observed_at": "when the catalogue was read",
        },
    ),
    "model_figures": MartView(
        (
            "The newest model-level figure per model, reasoning effort, metric and method "
            "(Artificial Analysis's medians across the providers it measures): never attributed "
            "to a provider."
        ),
        {
            "model_name": "model display name",
            "model_reviewed": "the model is reviewed (false: kept under the source's id)",
            "stale": "older than its source's cadence allows at the build's data date",
        },
        inherits="model_figures",
    ),
    "unreviewed_entities": MartView(
        (
            "Providers and models kept under a source's stable id that no reviewed alias knows "
            "yet, most cited first (speedbook resolve --pending)."
        ),
        {
            "kind": "provider or model",
            "entity_id": "the normalised slug of the source's id",
            "name": "the name the sources give it (the most used)",
            "named_by": "the sources whose ids name it",
            "citations": "rows of figures, offers and listings that cite it",
        },
    ),
    "source_health": MartView(
        (
            "Each registered source as of the build: newest snapshot and how its extraction went,"
            " the snapshot in use (newest usable one) and its age, last fetch outcome, and a "
            "status."
        ),
        {
            "source_id": "registry id",
            "kind": "benchmark, compilation, claim or platform_doc",
            "tier": TIER,
            "format": "parser that reads it",
            "cadence": "how often it should be refreshed",
            "max_age_minutes": "a snapshot older than this is stale [minutes]",
            "snapshots": "snapshots retrieved by the as-of time",
            "latest_snapshot_id": (
                "newest snapshot retrieved by the as-of time; null when there is none"
            ),
            "retrieved_at": "when the newest snapshot was retrieved",
            "obtained_by": (
                "how the newest snapshot was obtained: bundled, fetched, manual or reconstructed"
            ),
            "reconstructed_from": (
                "for a reconstructed newest snapshot, the title of the document it was rebuilt "
                "from; null otherwise"
            ),
            "used_snapshot_id": (
                "the snapshot the build reads the source from: its newest usable one "
                "(mart.latest_snapshots); differs from latest_snapshot_id when the newest is "
                "damaged or failed extraction; null when none is usable"
            ),
            "used_retrieved_at": "when used_snapshot_id was retrieved",
            "confirmed_at": (
                "latest time a fetch found the snapshot in use unchanged, by the as-of time (only"
                " when it is also the newest)"
            ),
            "age_days": (
                "age of the snapshot in use (used_snapshot_id) at the build's data date (not the "
                "wall clock) [days]"
            ),
            "stale": (
                "the snapshot in use, or its latest re-confirmation, is older than "
                "max_age_minutes at the data date (the rule of mart.is_stale, on the retrieval "
                "time)"
            ),
            "last_fetch_outcome": (
                "outcome of the last `speedbook fetch` by the as-of time: new, unchanged, "
                "not_modified or failed; null when never fetched"
            ),
            "last_fetch_at": "when the last fetch ended",
            "last_fetch_detail": (
                "for a failed fetch, the reason; otherwise what was stored or matched"
            ),
            "last_fetch_http_status": "HTTP status of the last fetch's final response",
            "last_success_at": "when a fetch last ended in new, unchanged or not_modified",
            "extraction_status": "extraction of the newest snapshot: ok, failed or damaged",
            "extraction_error": "why the extraction failed",
            "rows_extracted": "rows the newest snapshot gave over every staged frame [rows]",
            "row_counts": "rows per staged frame, JSON",
            "status": (
                "the most serious problem: no_snapshot, not_extracted, extraction_failed, "
                "fetch_failed, stale, else ok"
            ),
        },
    ),
    "figure_history": MartView(
        (
            "Any endpoint's figure over time: every snapshot's observation (record = snapshot) "
            "and the current figure of every published release (record = release)."
        ),
        {
            "record": (
                "snapshot: one observation of one snapshot; release: the figure a published "
                "release gave as current"
            ),
            "at_time": (
                "time axis: observed_at for a snapshot row, the release's data date for a release"
                " row (UTC)"
            ),
            "release_version": "the release (history.releases.version); null for snapshot rows",
            "release_data_date": "the release's data date; null for snapshot rows",
            "endpoint_id": ENDPOINT_ID,
            "provider_id": "inference provider",
            "model_id": "canonical model",
            "precision": "variant: precision, unknown when the source does not state it",
            "service_tier": SERVICE_TIER,
            "reasoning_effort": REASONING_EFFORT,
            "metric": METRIC,
            "scope": SCOPE,
            "role": (
                "snapshot rows: what the figure is on its page (measured, headline, claim, ...); "
                "null for release rows"
            ),
            "value": "the figure in unit; null when only a range or bound is known",
            "low": "lower end of a range or bound, in unit",
            "high": "upper end of a range or bound, in unit",
            "qualifier": "approx, at_least, up_to or range as the source wrote it; null when exact",
            "unit": "unit of value, low and high",
            "tier": TIER,
            "stale": "release rows: stale in that release; null for snapshot rows",
            "is_headline": (
                "release rows: the provider's headline in that release; null for snapshot rows"
            ),
            "observed_at": "when the source says the figure was measured (UTC)",
            "retrieved_at": "when the snapshot holding it was retrieved (UTC)",
            "source_id": "registry id of the source",
            "snapshot_id": "the snapshot the figure was read from",
            "method": "how the figure was measured",
            "statistic": (
                "the statistic of the requests in the window; null for a claim, a bound or a "
                "figure whose source does not say"
            ),
        },
    ),
}
