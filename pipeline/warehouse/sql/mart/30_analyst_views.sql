-- Views for analysts. Each one is documented with COMMENT ON VIEW / COMMENT ON COLUMN, and
-- sql/DATA_DICTIONARY.md is generated from those comments (`speedbook dictionary`).
-- Like every mart view, they describe the build's as-of time: snapshots retrieved later are
-- not used, and ages are measured from the build's data date, never from the wall clock.

-- Per model, variant and method, the providers ranked by their current central (median or p50)
-- live output speed: figures of different methods are ranked apart, never against each other.
-- A source that does not state a variant part (precision, reasoning effort) files its figure
-- under its own variant, so such figures are ranked in their own group. Only point figures
-- (exact or approximate) are ranked: a bound ("up to 740") or a range is not a median.
CREATE OR REPLACE VIEW mart.leaderboard AS
WITH central AS (
    SELECT * FROM mart.current_figures
    WHERE scope = 'live_median' AND value IS NOT NULL AND statistic IN ('median', 'p50')
),
speed AS (
    SELECT * FROM central
    WHERE metric = 'output_tokens_per_s' AND coalesce(qualifier, 'approx') = 'approx'
),
ttft AS (
    SELECT endpoint_id, method, value AS ttft_s, source_id AS ttft_source_id
    FROM central WHERE metric = 'ttft_s'
),
price AS (
    SELECT endpoint_id, value AS price_blended_usd_per_mtok, source_id AS price_source_id
    FROM mart.current_figures
    WHERE metric = 'price_blended_usd_per_mtok' AND scope = 'live_median' AND value IS NOT NULL
    QUALIFY row_number() OVER (PARTITION BY endpoint_id ORDER BY tier, observed_at DESC,
                                                                 source_id) = 1
)
SELECT s.model_id, m.name AS model_name, s.precision, s.service_tier, s.reasoning_effort,
       s.region, s.method, s.statistic, s.window_minutes,
       -- a stale figure never outranks a fresh one; equal figures share a rank
       rank() OVER variant AS rank,
       count(*) OVER (PARTITION BY s.model_id, s.precision, s.service_tier, s.reasoning_effort,
                                   s.region, s.method)
           AS providers_ranked,
       s.provider_id, p.name AS provider_name, s.endpoint_id,
       s.value AS output_tokens_per_s, s.qualifier,
       t.ttft_s, t.ttft_source_id, pr.price_blended_usd_per_mtok, pr.price_source_id,
       s.tier, s.source_id, s.observed_at, s.stale,
       s.corroborating_sources, s.corroborated_by, s.disputed_by,
       s.source_url, s.snapshot_id, s.observation_id
FROM speed AS s
JOIN core.models AS m USING (model_id)
JOIN core.providers AS p USING (provider_id)
LEFT JOIN ttft AS t USING (endpoint_id, method)
LEFT JOIN price AS pr USING (endpoint_id)
WINDOW variant AS (
    PARTITION BY s.model_id, s.precision, s.service_tier, s.reasoning_effort, s.region, s.method
    ORDER BY s.stale, s.value DESC
)
ORDER BY s.model_id, s.precision, s.service_tier, s.reasoning_effort NULLS FIRST,
         s.region NULLS FIRST, s.method, rank, s.provider_id, s.endpoint_id;

COMMENT ON VIEW mart.leaderboard IS
    'Per model, variant and method, the providers ranked by current central (median or p50) live output speed (point figures; fresh before stale), with TTFT of the same method and price where known.';
COMMENT ON COLUMN mart.leaderboard.model_id IS 'canonical model';
COMMENT ON COLUMN mart.leaderboard.model_name IS 'model display name';
COMMENT ON COLUMN mart.leaderboard.precision IS 'variant: precision, unknown when the source does not state it';
COMMENT ON COLUMN mart.leaderboard.service_tier IS 'variant: service tier (standard, turbo, fast, latency-optimized, reference)';
COMMENT ON COLUMN mart.leaderboard.reasoning_effort IS 'variant: reasoning effort (low, medium, high); null when not stated';
COMMENT ON COLUMN mart.leaderboard.region IS 'variant: region of a regional endpoint; null for the default one';
COMMENT ON COLUMN mart.leaderboard.method IS 'how the speed was measured (figures of different methods are ranked apart)';
COMMENT ON COLUMN mart.leaderboard.statistic IS 'median or p50 of the requests in the window';
COMMENT ON COLUMN mart.leaderboard.window_minutes IS 'the window the statistic covers [minutes]; null for a one-off run';
COMMENT ON COLUMN mart.leaderboard.rank IS '1 = fastest within the model, variant and method; fresh figures rank before stale ones; ties share a rank';
COMMENT ON COLUMN mart.leaderboard.providers_ranked IS 'how many providers the model, variant and method ranks';
COMMENT ON COLUMN mart.leaderboard.provider_id IS 'inference provider';
COMMENT ON COLUMN mart.leaderboard.provider_name IS 'provider display name';
COMMENT ON COLUMN mart.leaderboard.endpoint_id IS 'provider/model/precision/service_tier/reasoning_effort';
COMMENT ON COLUMN mart.leaderboard.output_tokens_per_s IS 'current live median output speed [tokens/s]';
COMMENT ON COLUMN mart.leaderboard.qualifier IS 'approx when the source gives an approximate figure; null when exact (bounds and ranges are not ranked)';
COMMENT ON COLUMN mart.leaderboard.ttft_s IS 'current central time to first token of the same endpoint by the same method, where a source gives it [s]';
COMMENT ON COLUMN mart.leaderboard.ttft_source_id IS 'source of ttft_s';
COMMENT ON COLUMN mart.leaderboard.price_blended_usd_per_mtok IS 'current blended price of the same endpoint, where a source gives it [USD per 1M tokens]';
COMMENT ON COLUMN mart.leaderboard.price_source_id IS 'source of price_blended_usd_per_mtok';
COMMENT ON COLUMN mart.leaderboard.tier IS 'tier of the speed figure''s source: T1, T2 or T3';
COMMENT ON COLUMN mart.leaderboard.source_id IS 'source of the speed figure';
COMMENT ON COLUMN mart.leaderboard.observed_at IS 'when the speed figure was observed';
COMMENT ON COLUMN mart.leaderboard.stale IS 'the speed figure is older than its source''s cadence allows, measured from the build''s data date';
COMMENT ON COLUMN mart.leaderboard.corroborating_sources IS 'how many independent sources of the same measurement agree within 10% (within 7 days)';
COMMENT ON COLUMN mart.leaderboard.corroborated_by IS 'those sources';
COMMENT ON COLUMN mart.leaderboard.disputed_by IS 'independent sources of the same measurement whose figure differs by more than 10% (within 7 days); see mart.disagreements';
COMMENT ON COLUMN mart.leaderboard.source_url IS 'address of the snapshot the speed figure comes from';
COMMENT ON COLUMN mart.leaderboard.snapshot_id IS 'raw snapshot of the speed figure, <source_id>/<file>';
COMMENT ON COLUMN mart.leaderboard.observation_id IS 'the speed figure in core.observations';


-- Every record claim beside what a live endpoint sustains. The live figures are current live
-- medians of output speed (one stream's tokens per second over a window), point figures only
-- (no bounds or ranges), picked fresh first, then by tier, then newest. A claim's precision must match the live figure's unless one of them
-- does not state it. Only per-user peaks get ratios: an aggregate figure (all users of a server
-- together) measures something else, and is never put on the same scale.
CREATE OR REPLACE VIEW mart.peak_vs_live AS
WITH build AS (
    SELECT as_of FROM core.build_state
),
evidence AS (
    SELECT e.claim_id, min(e.tier) AS claim_tier,
           list(DISTINCT e.source_id ORDER BY e.source_id) AS claim_sources,
           min(e.retrieved_at) AS first_retrieved_at
    FROM core.claim_evidence AS e, build
    WHERE build.as_of IS NULL OR e.retrieved_at <= build.as_of
    GROUP BY e.claim_id
),
live AS (
    SELECT * FROM mart.current_figures
    WHERE metric = 'output_tokens_per_s' AND scope = 'live_median' AND value IS NOT NULL
      AND coalesce(qualifier, 'approx') = 'approx' AND statistic IN ('median', 'p50')
),
same_provider AS (
    SELECT c.claim_id, l.endpoint_id, l.value, l.tier, l.source_id, l.observed_at, l.stale,
           l.observation_id
    FROM core.claims AS c
    JOIN live AS l
      ON l.provider_id = c.provider_id AND l.model_id = c.model_id
     AND (l.precision = c.precision OR 'unknown' IN (l.precision, c.precision))
    QUALIFY row_number() OVER (
        PARTITION BY c.claim_id ORDER BY l.stale, l.tier, mart.method_preference(l.method),
                                         l.observed_at DESC, l.value DESC, l.endpoint_id
    ) = 1
),
fastest AS (
    SELECT c.claim_id, l.provider_id, l.endpoint_id, l.value, l.tier, l.source_id,
           l.observed_at, l.stale, l.observation_id
    FROM core.claims AS c
    JOIN live AS l
      ON l.model_id = c.model_id
     AND (l.precision = c.precision OR 'unknown' IN (l.precision, c.precision))
    QUALIFY row_number() OVER (
        PARTITION BY c.claim_id ORDER BY l.stale, l.value DESC, l.tier, l.endpoint_id,
                                         l.observation_id
    ) = 1
)
SELECT c.claim_id, c.provider_id, p.name AS provider_name, c.model_id, m.name AS model_name,
       c.hardware, c.scope, c.figure_text, c.value AS claim_value, c.qualifier,
       c.precision, c.technique, c.verified_by, c.claimed, e.claim_tier, e.claim_sources,
       e.first_retrieved_at,
       sp.endpoint_id AS live_endpoint_id, sp.observation_id AS live_observation_id,
       sp.value AS live_value, sp.tier AS live_tier,
       sp.source_id AS live_source_id, sp.observed_at AS live_observed_at,
       sp.stale AS live_stale,
       CASE WHEN c.scope = 'peak_per_user' THEN c.value / sp.value END AS peak_to_live_ratio,
       f.provider_id AS fastest_provider_id, f.endpoint_id AS fastest_endpoint_id,
       f.observation_id AS fastest_observation_id,
       f.value AS fastest_live_value, f.tier AS fastest_tier, f.source_id AS fastest_source_id,
       f.observed_at AS fastest_observed_at, f.stale AS fastest_stale,
       CASE WHEN c.scope = 'peak_per_user' THEN c.value / f.value END
           AS peak_to_fastest_live_ratio,
       c.notes
FROM core.claims AS c
JOIN evidence AS e USING (claim_id)
JOIN core.providers AS p ON p.provider_id = c.provider_id
JOIN core.models AS m ON m.model_id = c.model_id
LEFT JOIN same_provider AS sp USING (claim_id)
LEFT JOIN fastest AS f USING (claim_id)
ORDER BY c.provider_id, c.model_id, c.claim_id;

COMMENT ON VIEW mart.peak_vs_live IS
    'Every record claim found by the build''s as-of time beside the live median on the same provider and model, and the fastest live median on that model, with their ratios.';
COMMENT ON COLUMN mart.peak_vs_live.claim_id IS 'reviewed claim (pipeline/metadata/claims.toml)';
COMMENT ON COLUMN mart.peak_vs_live.provider_id IS 'who the claim is about: provider or hardware vendor';
COMMENT ON COLUMN mart.peak_vs_live.provider_name IS 'provider display name';
COMMENT ON COLUMN mart.peak_vs_live.model_id IS 'canonical model the claim was measured on';
COMMENT ON COLUMN mart.peak_vs_live.model_name IS 'model display name';
COMMENT ON COLUMN mart.peak_vs_live.hardware IS 'hardware the claim names, e.g. Cerebras WSE-3';
COMMENT ON COLUMN mart.peak_vs_live.scope IS 'peak_per_user (best case, one stream) or aggregate (all users of a server together)';
COMMENT ON COLUMN mart.peak_vs_live.figure_text IS 'the claim as the sources write it';
COMMENT ON COLUMN mart.peak_vs_live.claim_value IS 'the claimed figure [tokens/s]';
COMMENT ON COLUMN mart.peak_vs_live.qualifier IS 'approx or at_least as the sources write it; null when exact';
COMMENT ON COLUMN mart.peak_vs_live.precision IS 'precision the claim states, unknown when not stated';
COMMENT ON COLUMN mart.peak_vs_live.technique IS 'technique behind the figure, e.g. speculative decoding';
COMMENT ON COLUMN mart.peak_vs_live.verified_by IS 'who measured it, if stated';
COMMENT ON COLUMN mart.peak_vs_live.claimed IS 'year the claim was made';
COMMENT ON COLUMN mart.peak_vs_live.claim_tier IS 'best tier among the sources carrying the claim';
COMMENT ON COLUMN mart.peak_vs_live.claim_sources IS 'sources carrying the claim by the as-of time';
COMMENT ON COLUMN mart.peak_vs_live.first_retrieved_at IS 'when a snapshot carrying the claim was first retrieved';
COMMENT ON COLUMN mart.peak_vs_live.live_endpoint_id IS 'the same provider''s endpoint on the same model whose live median is shown; null when it has none';
COMMENT ON COLUMN mart.peak_vs_live.live_observation_id IS 'the live figure in core.observations (mart.current_figures)';
COMMENT ON COLUMN mart.peak_vs_live.fastest_observation_id IS 'the fastest live figure in core.observations (mart.current_figures)';
COMMENT ON COLUMN mart.peak_vs_live.live_value IS 'that endpoint''s current central (median or p50) live output speed (fresh first, then tier, then the headline''s method preference, then newest) [tokens/s]';
COMMENT ON COLUMN mart.peak_vs_live.live_tier IS 'tier of live_value''s source';
COMMENT ON COLUMN mart.peak_vs_live.live_source_id IS 'source of live_value';
COMMENT ON COLUMN mart.peak_vs_live.live_observed_at IS 'when live_value was observed';
COMMENT ON COLUMN mart.peak_vs_live.live_stale IS 'live_value is older than its source''s cadence allows';
COMMENT ON COLUMN mart.peak_vs_live.peak_to_live_ratio IS 'claim_value / live_value: how far the per-user record sits above what the same provider sustains live on the model; null for aggregate claims and without a live figure';
COMMENT ON COLUMN mart.peak_vs_live.fastest_provider_id IS 'provider with the fastest current live median on the model (fresh figures first)';
COMMENT ON COLUMN mart.peak_vs_live.fastest_endpoint_id IS 'endpoint of fastest_live_value';
COMMENT ON COLUMN mart.peak_vs_live.fastest_live_value IS 'fastest current live median output speed on the model, any provider [tokens/s]';
COMMENT ON COLUMN mart.peak_vs_live.fastest_tier IS 'tier of fastest_live_value''s source';
COMMENT ON COLUMN mart.peak_vs_live.fastest_source_id IS 'source of fastest_live_value';
COMMENT ON COLUMN mart.peak_vs_live.fastest_observed_at IS 'when fastest_live_value was observed';
COMMENT ON COLUMN mart.peak_vs_live.fastest_stale IS 'fastest_live_value is older than its source''s cadence allows';
COMMENT ON COLUMN mart.peak_vs_live.peak_to_fastest_live_ratio IS 'claim_value / fastest_live_value: the per-user record against the best any live endpoint sustains on the model; null for aggregate claims and without a live figure';
COMMENT ON COLUMN mart.peak_vs_live.notes IS 'reviewer''s notes on the claim';


-- Which platform or catalogue offers which model, from each catalogue's latest usable snapshot
-- (mart.latest_snapshots): a damaged or rejected newer snapshot leaves the last good listing.
CREATE OR REPLACE VIEW mart.platform_models AS
SELECT pm.platform_id, pl.name AS platform_name, pl.kind AS platform_kind,
       pm.platform_model_id, pm.name AS listed_name, pm.model_id, m.name AS model_name,
       m.reviewed AS model_reviewed,
       pm.precision, pm.service_tier, pm.task, pm.publisher, pm.function_calling, pm.beta,
       pm.lora, pm.context_window, pm.price_input_usd_per_mtok, pm.price_output_usd_per_mtok,
       pm.planned_deprecation, pm.source_id, pm.snapshot_id, l.url AS source_url,
       pm.observed_at
FROM core.platform_models AS pm
JOIN mart.latest_snapshots AS l ON l.snapshot_id = pm.snapshot_id
JOIN core.platforms AS pl ON pl.platform_id = pm.platform_id
LEFT JOIN core.models AS m ON m.model_id = pm.model_id
ORDER BY pm.platform_id, pm.platform_model_id, pm.snapshot_id;

COMMENT ON VIEW mart.platform_models IS
    'Which platform or catalogue offers which model, at which precision, from each catalogue''s latest usable snapshot as of the build (mart.latest_snapshots).';
COMMENT ON COLUMN mart.platform_models.platform_id IS 'model-access platform (pipeline/metadata/platforms.toml)';
COMMENT ON COLUMN mart.platform_models.platform_name IS 'platform display name';
COMMENT ON COLUMN mart.platform_models.platform_kind IS 'managed_cloud_catalogue, edge_hosted, gateway or model_choice_layer';
COMMENT ON COLUMN mart.platform_models.platform_model_id IS 'the platform''s own id for the model';
COMMENT ON COLUMN mart.platform_models.listed_name IS 'the model''s name as the catalogue lists it';
COMMENT ON COLUMN mart.platform_models.model_id IS 'the model: reviewed where an alias or id matches, else unreviewed under the catalogue''s id';
COMMENT ON COLUMN mart.platform_models.model_reviewed IS 'model_id is a reviewed model (false: kept under the catalogue''s id until a reviewer confirms it)';
COMMENT ON COLUMN mart.platform_models.model_name IS 'canonical model display name';
COMMENT ON COLUMN mart.platform_models.precision IS 'precision read from the listed name, unknown when it states none';
COMMENT ON COLUMN mart.platform_models.service_tier IS 'service tier read from the listed name';
COMMENT ON COLUMN mart.platform_models.task IS 'task the catalogue files the model under';
COMMENT ON COLUMN mart.platform_models.publisher IS 'who published the model, as the catalogue says';
COMMENT ON COLUMN mart.platform_models.function_calling IS 'the catalogue marks function calling';
COMMENT ON COLUMN mart.platform_models.beta IS 'the catalogue marks it beta';
COMMENT ON COLUMN mart.platform_models.lora IS 'the catalogue marks LoRA support';
COMMENT ON COLUMN mart.platform_models.context_window IS 'context window the catalogue states [tokens]';
COMMENT ON COLUMN mart.platform_models.price_input_usd_per_mtok IS 'input price the catalogue states [USD per 1M tokens]';
COMMENT ON COLUMN mart.platform_models.price_output_usd_per_mtok IS 'output price the catalogue states [USD per 1M tokens]';
COMMENT ON COLUMN mart.platform_models.planned_deprecation IS 'planned deprecation, as the catalogue writes it';
COMMENT ON COLUMN mart.platform_models.source_id IS 'catalogue source';
COMMENT ON COLUMN mart.platform_models.snapshot_id IS 'the catalogue snapshot (the source''s latest usable one), <source_id>/<file>';
COMMENT ON COLUMN mart.platform_models.source_url IS 'address of the snapshot';
COMMENT ON COLUMN mart.platform_models.observed_at IS 'when the catalogue was read';


-- Figures that sources dispute: one row per pair of observations that mart.observation_pairs
-- flags (comparable endpoints, same metric and scope, within 7 days, more than 10% apart).
-- Side a is the better-tier source (then the first source id), so each pair appears once.
CREATE OR REPLACE VIEW mart.disagreements AS
SELECT p.provider_id, pr.name AS provider_name, p.model_id, m.name AS model_name,
       CASE WHEN p.a_precision <> 'unknown' THEN p.a_precision ELSE p.b_precision END
           AS precision,
       p.service_tier,
       coalesce(p.a_reasoning_effort, p.b_reasoning_effort) AS reasoning_effort,
       p.region, p.metric, p.scope, p.a_method AS method, p.a_statistic AS statistic, p.unit,
       p.a_value, p.b_value,
       (greatest(p.a_value, p.b_value) - least(p.a_value, p.b_value))
           / least(p.a_value, p.b_value) AS relative_difference,
       p.a_source_id, p.a_tier, p.a_observed_at, p.b_source_id, p.b_tier, p.b_observed_at,
       p.a_endpoint_id, p.b_endpoint_id, p.a_quote, p.b_quote,
       p.a_id AS a_observation_id, p.b_id AS b_observation_id
FROM mart.observation_pairs AS p
JOIN core.providers AS pr ON pr.provider_id = p.provider_id
JOIN core.models AS m ON m.model_id = p.model_id
WHERE p.disagree AND p.same_measurement AND p.independent
  AND (p.a_tier < p.b_tier OR (p.a_tier = p.b_tier AND p.a_source_id < p.b_source_id))
ORDER BY p.provider_id, p.model_id, p.metric, p.scope, p.a_observed_at, p.a_id, p.b_id;

COMMENT ON VIEW mart.disagreements IS
    'Figures that independent sources dispute: comparable endpoints, the same metric, scope, method and statistic, observed within 7 days, more than 10% apart. One row per pair.';
COMMENT ON COLUMN mart.disagreements.region IS 'variant: region of a regional endpoint (the same on both sides)';
COMMENT ON COLUMN mart.disagreements.method IS 'how both figures were measured (the same on both sides)';
COMMENT ON COLUMN mart.disagreements.statistic IS 'the statistic both figures are (the same on both sides)';
COMMENT ON COLUMN mart.disagreements.provider_id IS 'provider both figures are about';
COMMENT ON COLUMN mart.disagreements.provider_name IS 'provider display name';
COMMENT ON COLUMN mart.disagreements.model_id IS 'model both figures are about';
COMMENT ON COLUMN mart.disagreements.model_name IS 'model display name';
COMMENT ON COLUMN mart.disagreements.precision IS 'variant: precision as either source states it, unknown when neither does';
COMMENT ON COLUMN mart.disagreements.service_tier IS 'variant: service tier (the same on both sides)';
COMMENT ON COLUMN mart.disagreements.reasoning_effort IS 'variant: reasoning effort as either source states it';
COMMENT ON COLUMN mart.disagreements.metric IS 'output_tokens_per_s, ttft_s, e2e_s or price_blended_usd_per_mtok';
COMMENT ON COLUMN mart.disagreements.scope IS 'live_median, peak_per_user or aggregate (the same on both sides)';
COMMENT ON COLUMN mart.disagreements.unit IS 'unit of both values';
COMMENT ON COLUMN mart.disagreements.a_value IS 'figure of side a (the better-tier source)';
COMMENT ON COLUMN mart.disagreements.b_value IS 'figure of side b';
COMMENT ON COLUMN mart.disagreements.relative_difference IS '(larger - smaller) / smaller: 0.25 means the larger figure is 25% above the smaller';
COMMENT ON COLUMN mart.disagreements.a_source_id IS 'source of a_value';
COMMENT ON COLUMN mart.disagreements.a_tier IS 'tier of a_source_id';
COMMENT ON COLUMN mart.disagreements.a_observed_at IS 'when a_value was observed';
COMMENT ON COLUMN mart.disagreements.b_source_id IS 'source of b_value';
COMMENT ON COLUMN mart.disagreements.b_tier IS 'tier of b_source_id';
COMMENT ON COLUMN mart.disagreements.b_observed_at IS 'when b_value was observed';
COMMENT ON COLUMN mart.disagreements.a_endpoint_id IS 'endpoint as side a states it';
COMMENT ON COLUMN mart.disagreements.b_endpoint_id IS 'endpoint as side b states it';
COMMENT ON COLUMN mart.disagreements.a_quote IS 'side a''s figure as its source wrote it';
COMMENT ON COLUMN mart.disagreements.b_quote IS 'side b''s figure as its source wrote it';
COMMENT ON COLUMN mart.disagreements.a_observation_id IS 'side a in core.observations';
COMMENT ON COLUMN mart.disagreements.b_observation_id IS 'side b in core.observations';


-- Each registered source's state as of the build: its newest snapshot of any extraction status
-- (so a damaged or rejected one is reported here), the snapshot the build actually reads it from
-- (mart.latest_snapshots: the last good one), the last fetch, and a status naming the most
-- serious problem.
CREATE OR REPLACE VIEW mart.source_health AS
WITH build AS (
    SELECT as_of, data_date FROM core.build_state
),
newest AS (
    SELECT s.source_id, s.snapshot_id, s.retrieved_at, s.obtained_by, s.reconstructed_from,
           count(*) OVER (PARTITION BY s.source_id) AS snapshots
    FROM core.snapshots AS s, build
    WHERE build.as_of IS NULL OR s.retrieved_at <= build.as_of
    QUALIFY row_number() OVER (
        PARTITION BY s.source_id ORDER BY s.retrieved_at DESC, s.snapshot_id DESC
    ) = 1
),
fetches AS (
    SELECT f.*,
           max(f.fetched_at) FILTER (WHERE f.outcome IN ('new', 'unchanged', 'not_modified'))
               OVER (PARTITION BY f.source_id) AS last_success_at
    FROM core.fetch_outcomes AS f, build
    WHERE build.as_of IS NULL OR f.fetched_at <= build.as_of
    QUALIFY row_number() OVER (
        PARTITION BY f.source_id ORDER BY f.fetched_at DESC, f.log_line DESC
    ) = 1
),
figures AS (  -- of the newest snapshots only: grouping every observation by snapshot took 0.8 s
    -- of every poll at 90 days, a semi-join on the ids 0.1-0.2 s. A row carries its snapshot's
    -- retrieved_at (checked as rows are added: warehouse/appended.py): joined on it too, the
    -- scan skips the row groups outside the newest snapshots' times (zone maps keep 8 bytes of
    -- an id), in 5-8 ms.
    SELECT o.snapshot_id, count(*) AS observations
    FROM core.observations AS o
    SEMI JOIN newest AS n ON n.snapshot_id = o.snapshot_id AND n.retrieved_at = o.retrieved_at
    GROUP BY o.snapshot_id
),
joined AS (
    SELECT src.source_id, src.kind, src.tier, src.format, src.cadence, src.max_age_minutes,
           n.snapshots, n.snapshot_id AS latest_snapshot_id, n.retrieved_at, n.obtained_by,
           n.reconstructed_from,
           fr.latest_snapshot_id AS used_snapshot_id, fr.latest_retrieved_at AS used_retrieved_at,
           fr.confirmed_at,
           round(date_diff('second', fr.latest_retrieved_at, fr.data_date) / 86400, 1)
               AS age_days,
           -- The staleness rule of the figures (mart.fresh_as_of, mart.older_than_cadence: the
           -- cadence from the data date, extended by a re-confirming fetch), applied to the
           -- snapshot in use. Its retrieval time stands in for observed_at on purpose: this says
           -- whether the source was read recently enough, while its figures carry their own
           -- dates (an LLMPerf summary fetched today still reports a 2023 run).
           mart.older_than_cadence(
               mart.fresh_as_of(fr.latest_retrieved_at, fr.latest_retrieved_at,
                                fr.latest_retrieved_at, fr.confirmed_at),
               fr.data_date, fr.max_age_minutes
           ) AS stale,
           f.outcome AS last_fetch_outcome, f.fetched_at AS last_fetch_at,
           f.detail AS last_fetch_detail, f.http_status AS last_fetch_http_status,
           f.last_success_at,
           x.status AS extraction_status, x.error AS extraction_error,
           x.rows_extracted, x.row_counts,
           coalesce(fig.observations, 0) AS observations
    FROM core.sources AS src
    JOIN mart.source_freshness AS fr ON fr.source_id = src.source_id
    LEFT JOIN newest AS n ON n.source_id = src.source_id
    LEFT JOIN fetches AS f ON f.source_id = src.source_id
    LEFT JOIN core.extractions AS x ON x.snapshot_id = n.snapshot_id
    LEFT JOIN figures AS fig ON fig.snapshot_id = n.snapshot_id
)
SELECT *,
       CASE WHEN latest_snapshot_id IS NULL THEN 'no_snapshot'
            WHEN extraction_status IS NULL THEN 'not_extracted'
            WHEN extraction_status <> 'ok' THEN 'extraction_failed'
            WHEN last_fetch_outcome = 'failed' THEN 'fetch_failed'
            WHEN stale THEN 'stale'
            ELSE 'ok' END AS status
FROM joined
ORDER BY source_id;

COMMENT ON VIEW mart.source_health IS
    'Each registered source as of the build: newest snapshot and how its extraction went, the snapshot in use (newest usable one) and its age, last fetch outcome, and a status.';
COMMENT ON COLUMN mart.source_health.source_id IS 'registry id';
COMMENT ON COLUMN mart.source_health.kind IS 'benchmark, compilation, claim or platform_doc';
COMMENT ON COLUMN mart.source_health.tier IS 'T1, T2 or T3';
COMMENT ON COLUMN mart.source_health.format IS 'parser that reads it';
COMMENT ON COLUMN mart.source_health.cadence IS 'how often it should be refreshed';
COMMENT ON COLUMN mart.source_health.max_age_minutes IS 'a snapshot older than this is stale [minutes]';
COMMENT ON COLUMN mart.source_health.snapshots IS 'snapshots retrieved by the as-of time';
COMMENT ON COLUMN mart.source_health.latest_snapshot_id IS 'newest snapshot retrieved by the as-of time; null when there is none';
COMMENT ON COLUMN mart.source_health.retrieved_at IS 'when the newest snapshot was retrieved';
COMMENT ON COLUMN mart.source_health.obtained_by IS 'how the newest snapshot was obtained: bundled, fetched, manual or reconstructed';
COMMENT ON COLUMN mart.source_health.reconstructed_from IS 'for a reconstructed newest snapshot, the title of the document it was rebuilt from; null otherwise';
COMMENT ON COLUMN mart.source_health.used_snapshot_id IS 'the snapshot the build reads the source from: its newest usable one (mart.latest_snapshots); differs from latest_snapshot_id when the newest is damaged or failed extraction; null when none is usable';
COMMENT ON COLUMN mart.source_health.used_retrieved_at IS 'when used_snapshot_id was retrieved';
COMMENT ON COLUMN mart.source_health.confirmed_at IS 'latest time a fetch found the snapshot in use unchanged, by the as-of time (only when it is also the newest)';
COMMENT ON COLUMN mart.source_health.age_days IS 'age of the snapshot in use (used_snapshot_id) at the build''s data date (not the wall clock) [days]';
COMMENT ON COLUMN mart.source_health.stale IS 'the snapshot in use, or its latest re-confirmation, is older than max_age_minutes at the data date (the rule of mart.is_stale, on the retrieval time)';
COMMENT ON COLUMN mart.source_health.last_fetch_outcome IS 'outcome of the last `speedbook fetch` by the as-of time: new, unchanged, not_modified or failed; null when never fetched';
COMMENT ON COLUMN mart.source_health.last_fetch_at IS 'when the last fetch ended';
COMMENT ON COLUMN mart.source_health.last_fetch_detail IS 'for a failed fetch, the reason; otherwise what was stored or matched';
COMMENT ON COLUMN mart.source_health.last_fetch_http_status IS 'HTTP status of the last fetch''s final response';
COMMENT ON COLUMN mart.source_health.last_success_at IS 'when a fetch last ended in new, unchanged or not_modified';
COMMENT ON COLUMN mart.source_health.extraction_status IS 'extraction of the newest snapshot: ok, failed or damaged';
COMMENT ON COLUMN mart.source_health.extraction_error IS 'why the extraction failed';
COMMENT ON COLUMN mart.source_health.rows_extracted IS 'rows the newest snapshot gave over every staged frame [rows]';
COMMENT ON COLUMN mart.source_health.row_counts IS 'rows per staged frame, JSON';
COMMENT ON COLUMN mart.source_health.observations IS 'figures in core.observations from the newest snapshot';
COMMENT ON COLUMN mart.source_health.status IS 'the most serious problem: no_snapshot, not_extracted, extraction_failed, fetch_failed, stale, else ok';
