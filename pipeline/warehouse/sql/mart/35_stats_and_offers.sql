-- Every live statistic of every endpoint, snapshot by snapshot: the long table behind questions
-- such as "the p90 time to first token of every fp8 endpoint of a model".
CREATE OR REPLACE VIEW mart.endpoint_stats AS
SELECT o.endpoint_id, o.provider_id, p.name AS provider_name, p.reviewed AS provider_reviewed,
       o.model_id, m.name AS model_name, m.reviewed AS model_reviewed,
       o.precision, o.service_tier, o.reasoning_effort, o.region,
       o.metric, o.statistic, o.value, o.unit, o.window_minutes, o.method,
       o.observed_at, o.stale, o.source_id, o.tier, o.snapshot_id, o.observation_id
FROM mart.observations_as_of AS o
JOIN core.providers AS p USING (provider_id)
JOIN core.models AS m USING (model_id)
WHERE o.scope = 'live_median' AND o.statistic IS NOT NULL AND o.value IS NOT NULL
ORDER BY o.endpoint_id, o.metric, o.statistic, o.observed_at, o.snapshot_id;

COMMENT ON VIEW mart.endpoint_stats IS
    'One row per endpoint x metric x statistic x snapshot: every live statistic with how it was measured (method, statistic, window), up to the build''s as-of time.';
COMMENT ON COLUMN mart.endpoint_stats.provider_name IS 'provider display name';
COMMENT ON COLUMN mart.endpoint_stats.provider_reviewed IS 'the provider is reviewed (false: kept under a source''s id)';
COMMENT ON COLUMN mart.endpoint_stats.model_name IS 'model display name';
COMMENT ON COLUMN mart.endpoint_stats.model_reviewed IS 'the model is reviewed (false: kept under a source''s id)';

-- Who offers which model, from each catalogue's newest usable snapshot (mart.latest_snapshots):
-- a platform's own catalogue (Cloudflare, OpenRouter's model list, Azure), a catalogue of many
-- providers' catalogues (models.dev), and OpenRouter's endpoints (each a provider's offer on
-- OpenRouter). Prices in USD per million tokens whatever each source writes.
CREATE OR REPLACE VIEW mart.model_offers AS
WITH offers AS (
    SELECT pm.source_id, pm.snapshot_id, 'platform' AS offered_by_kind,
           pm.platform_id AS offered_by, pm.platform_id, pm.platform_model_id AS catalogue_model_id,
           pm.name AS listed_name, pm.model_id, pm.price_input_usd_per_mtok,
           pm.price_output_usd_per_mtok, pm.context_window, pm.function_calling, pm.observed_at
    FROM core.platform_models AS pm
    UNION ALL
    SELECT co.source_id, co.snapshot_id, 'provider', co.provider_id, co.platform_id,
           co.catalogue_model_id, co.name, co.model_id, co.price_input_usd_per_mtok,
           co.price_output_usd_per_mtok, co.context_window, co.function_calling, co.observed_at
    FROM core.catalogue_offers AS co
    UNION ALL
    SELECT eo.source_id, eo.snapshot_id, 'provider', eo.provider_id, NULL,
           eo.catalogue_model_id || ' @ ' || eo.endpoint_tag, eo.catalogue_model_id, eo.model_id,
           eo.price_input_usd_per_mtok, eo.price_output_usd_per_mtok, eo.context_window,
           eo.function_calling, eo.observed_at
    FROM core.endpoint_offers AS eo
)
SELECT o.source_id, o.offered_by_kind, o.offered_by, o.platform_id, o.catalogue_model_id,
       o.listed_name, o.model_id, m.name AS model_name, m.reviewed AS model_reviewed,
       o.price_input_usd_per_mtok, o.price_output_usd_per_mtok, o.context_window,
       o.function_calling, o.snapshot_id, o.observed_at
FROM offers AS o
SEMI JOIN mart.latest_snapshots AS l ON l.snapshot_id = o.snapshot_id
LEFT JOIN core.models AS m ON m.model_id = o.model_id
ORDER BY o.source_id, o.offered_by, o.catalogue_model_id;

COMMENT ON VIEW mart.model_offers IS
    'One row per catalogue x platform or provider x model, from each catalogue''s newest usable snapshot: the catalogue''s own id, the model (reviewed or not), prices in USD per million tokens, context window, tool calling.';
COMMENT ON COLUMN mart.model_offers.source_id IS 'the catalogue source';
COMMENT ON COLUMN mart.model_offers.offered_by_kind IS 'platform (a reviewed platform''s own catalogue) or provider (a provider listed in a catalogue of catalogues, or an endpoint on OpenRouter)';
COMMENT ON COLUMN mart.model_offers.offered_by IS 'the platform or provider offering the model';
COMMENT ON COLUMN mart.model_offers.platform_id IS 'the reviewed platform whose listing this is, where one is (platforms.toml)';
COMMENT ON COLUMN mart.model_offers.catalogue_model_id IS 'the model''s id in the catalogue (for an OpenRouter endpoint: model @ endpoint tag)';
COMMENT ON COLUMN mart.model_offers.listed_name IS 'the model as the catalogue names it';
COMMENT ON COLUMN mart.model_offers.model_id IS 'the model: reviewed, or kept under the catalogue''s id; null when the id names none';
COMMENT ON COLUMN mart.model_offers.model_name IS 'model display name';
COMMENT ON COLUMN mart.model_offers.model_reviewed IS 'the model is reviewed (false: kept under the catalogue''s id)';
COMMENT ON COLUMN mart.model_offers.price_input_usd_per_mtok IS 'input price [USD per 1M tokens]';
COMMENT ON COLUMN mart.model_offers.price_output_usd_per_mtok IS 'output price [USD per 1M tokens]';
COMMENT ON COLUMN mart.model_offers.context_window IS 'context window [tokens]';
COMMENT ON COLUMN mart.model_offers.function_calling IS 'the catalogue marks tool calling';
COMMENT ON COLUMN mart.model_offers.snapshot_id IS 'the catalogue''s newest usable snapshot';
COMMENT ON COLUMN mart.model_offers.observed_at IS 'when the catalogue was read';

-- Figures of different methods on comparable endpoints that are far apart: listed as such, never
-- as disputes (a 30-minute p50 of routed traffic and a 72-hour probe median measure different
-- things). Central statistics only (median, p50), independent sources only.
CREATE OR REPLACE VIEW mart.method_gaps AS
SELECT p.provider_id, p.model_id, p.service_tier, p.region, p.metric, p.scope, p.unit,
       p.a_method, p.a_statistic, p.a_value, p.a_source_id, p.a_observed_at, p.a_endpoint_id,
       p.b_method, p.b_statistic, p.b_value, p.b_source_id, p.b_observed_at, p.b_endpoint_id,
       (greatest(p.a_value, p.b_value) - least(p.a_value, p.b_value))
           / least(p.a_value, p.b_value) AS relative_difference,
       p.a_id AS a_observation_id, p.b_id AS b_observation_id
FROM mart.observation_pairs AS p
WHERE p.disagree AND NOT p.same_measurement AND p.independent
  AND p.a_statistic IN ('median', 'p50') AND p.b_statistic IN ('median', 'p50')
  AND p.a_method < p.b_method  -- each pair once
ORDER BY p.provider_id, p.model_id, p.metric, p.a_observed_at, p.a_id, p.b_id;

COMMENT ON VIEW mart.method_gaps IS
    'Pairs of central figures (median, p50) from independent sources on comparable endpoints whose methods differ and whose values are more than 10% apart: listed as a gap between methods, not as a dispute.';
COMMENT ON COLUMN mart.method_gaps.relative_difference IS '(larger - smaller) / smaller';
COMMENT ON COLUMN mart.method_gaps.provider_id IS 'provider both figures are about';
COMMENT ON COLUMN mart.method_gaps.model_id IS 'model both figures are about';
COMMENT ON COLUMN mart.method_gaps.service_tier IS 'variant: service tier (the same on both sides)';
COMMENT ON COLUMN mart.method_gaps.region IS 'variant: region of a regional endpoint (the same on both sides)';
COMMENT ON COLUMN mart.method_gaps.metric IS 'the metric of both figures';
COMMENT ON COLUMN mart.method_gaps.scope IS 'live_median (the same on both sides)';
COMMENT ON COLUMN mart.method_gaps.unit IS 'unit of both values';
COMMENT ON COLUMN mart.method_gaps.a_method IS 'how side a was measured (the first method by name)';
COMMENT ON COLUMN mart.method_gaps.a_statistic IS 'side a''s statistic: median or p50';
COMMENT ON COLUMN mart.method_gaps.a_value IS 'side a''s figure';
COMMENT ON COLUMN mart.method_gaps.a_source_id IS 'source of a_value';
COMMENT ON COLUMN mart.method_gaps.a_observed_at IS 'when a_value was observed';
COMMENT ON COLUMN mart.method_gaps.a_endpoint_id IS 'endpoint as side a states it';
COMMENT ON COLUMN mart.method_gaps.b_method IS 'how side b was measured';
COMMENT ON COLUMN mart.method_gaps.b_statistic IS 'side b''s statistic: median or p50';
COMMENT ON COLUMN mart.method_gaps.b_value IS 'side b''s figure';
COMMENT ON COLUMN mart.method_gaps.b_source_id IS 'source of b_value';
COMMENT ON COLUMN mart.method_gaps.b_observed_at IS 'when b_value was observed';
COMMENT ON COLUMN mart.method_gaps.b_endpoint_id IS 'endpoint as side b states it';

-- Model-level figures (Artificial Analysis's medians across providers): the newest of each model,
-- reasoning effort, metric and method, up to the build's as-of time. Never a provider's figure.
CREATE OR REPLACE VIEW mart.model_figures AS
SELECT f.*, m.name AS model_name, m.reviewed AS model_reviewed,
       mart.is_stale('live_median', f.observed_at, b.data_date, src.max_age_minutes) AS stale
FROM core.model_figures AS f
JOIN core.models AS m USING (model_id)
JOIN core.sources AS src USING (source_id), core.build_state AS b
WHERE b.as_of IS NULL OR f.retrieved_at <= b.as_of
QUALIFY row_number() OVER (
    PARTITION BY f.model_id, f.reasoning_effort, f.metric, f.method
    ORDER BY f.observed_at DESC, f.source_id, f.figure_id
) = 1
ORDER BY f.model_id, f.reasoning_effort NULLS FIRST, f.metric, f.method;

COMMENT ON VIEW mart.model_figures IS
    'The newest model-level figure per model, reasoning effort, metric and method (Artificial Analysis''s medians across the providers it measures): never attributed to a provider.';
COMMENT ON COLUMN mart.model_figures.model_name IS 'model display name';
COMMENT ON COLUMN mart.model_figures.model_reviewed IS 'the model is reviewed (false: kept under the source''s id)';
COMMENT ON COLUMN mart.model_figures.stale IS 'older than its source''s cadence allows at the build''s data date';

-- Entities kept under a source's stable id that no reviewer has confirmed yet, most cited first:
-- what `speedbook resolve --pending` lists for review.
CREATE OR REPLACE VIEW mart.unreviewed_entities AS
WITH cited AS (
    -- the history's figures and offers, counted as each build adds them
    -- (pipeline/warehouse/citations.py), and the catalogue entries of this build
    SELECT kind, entity_id, sum(citations)::BIGINT AS citations
    FROM (SELECT kind, entity_id, citations FROM staging.entity_citations
          UNION ALL
          SELECT 'model', model_id, count(*) FROM core.platform_models
          WHERE model_id IS NOT NULL GROUP BY ALL)
    GROUP BY ALL
),
entities AS (
    SELECT 'provider' AS kind, provider_id AS entity_id, name, named_by
    FROM core.providers WHERE NOT reviewed
    UNION ALL
    SELECT 'model', model_id, name, named_by FROM core.models WHERE NOT reviewed
)
SELECT e.kind, e.entity_id, e.name, e.named_by, coalesce(c.citations, 0) AS citations
FROM entities AS e
LEFT JOIN cited AS c USING (kind, entity_id)
ORDER BY citations DESC, e.kind, e.entity_id;

COMMENT ON VIEW mart.unreviewed_entities IS
    'Providers and models kept under a source''s stable id that no reviewed alias knows yet, most cited first (speedbook resolve --pending).';
COMMENT ON COLUMN mart.unreviewed_entities.kind IS 'provider or model';
COMMENT ON COLUMN mart.unreviewed_entities.entity_id IS 'the normalised slug of the source''s id';
COMMENT ON COLUMN mart.unreviewed_entities.name IS 'the name the sources give it (the most used)';
COMMENT ON COLUMN mart.unreviewed_entities.named_by IS 'the sources whose ids name it';
COMMENT ON COLUMN mart.unreviewed_entities.citations IS 'rows of figures, offers and listings that cite it';

-- columns of mart.observation_pairs added with methods and independence (its others are
-- documented in 31_view_comments.sql); mart.method_gaps and mart.disagreements inherit them
COMMENT ON COLUMN mart.observation_pairs.region IS 'variant: region of a regional endpoint (the same on both sides)';
COMMENT ON COLUMN mart.observation_pairs.a_method IS 'how side a was measured';
COMMENT ON COLUMN mart.observation_pairs.b_method IS 'how side b was measured';
COMMENT ON COLUMN mart.observation_pairs.a_statistic IS 'side a''s statistic (median, p50, ...)';
COMMENT ON COLUMN mart.observation_pairs.b_statistic IS 'side b''s statistic';
COMMENT ON COLUMN mart.observation_pairs.same_measurement IS 'both sides have the same method and statistic: only such figures corroborate or dispute each other';
COMMENT ON COLUMN mart.observation_pairs.independent IS 'the sources are independent: different publishers, different lineage, and neither cites the other or the other''s publisher';
COMMENT ON COLUMN mart.method_gaps.a_observation_id IS 'side a in core.observations';
COMMENT ON COLUMN mart.method_gaps.b_observation_id IS 'side b in core.observations';
