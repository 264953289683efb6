-- Views for analysts. Their columns are documented in pipeline/schema/mart.py, from which the
-- data dictionary is generated. Like every mart view, they describe the build's as-of time:
-- snapshots retrieved later are not used, and ages are measured from the build's data date.

-- A text's order reversed, as a key to take the greatest of: its code points negated, closed by
-- one (so that a text sorts before its own extensions, as it does ascending).
CREATE OR REPLACE MACRO mart.descending(text) AS
    list_transform(string_split(text, ''), c -> -unicode(c)) || [1];

-- What each endpoint offers, from its own newest listing (an endpoint polled earlier than the
-- source's newest snapshot keeps its prices): prices, uptime, limits. The newest observed, then
-- the newest snapshot, then the first tag (and model id, so that nothing is left to chance). A
-- table, computed once a build: it takes the newest of every listing kept, and the exports, the
-- Parquet and mart.model_offers each read it. First each endpoint's newest time, over two
-- columns of every listing; then the greatest among the listings of that time alone, a few per
-- endpoint, and its freshness joined to those. The greatest over every listing copied the whole
-- row each time a newer one came (3.9 s at 30 days of polls, against 1.3 s), and a window over
-- every listing, or a join of every listing, held them all (1.3 GB at 8 days, past the build's
-- memory budget).
CREATE OR REPLACE TEMP TABLE newest_listing AS
SELECT endpoint_id, max(observed_at) AS observed_at
FROM core.endpoint_offers
GROUP BY endpoint_id;

CREATE OR REPLACE TABLE mart.endpoint_offers AS
SELECT o.*, mart.older_than_cadence(o.observed_at, f.data_date, f.max_age_minutes) AS stale
FROM (
    SELECT unnest(arg_max(o, (o.observed_at, o.snapshot_id, mart.descending(o.endpoint_tag),
                              o.catalogue_model_id)))
    FROM core.endpoint_offers AS o
    SEMI JOIN newest_listing AS n
      ON n.endpoint_id = o.endpoint_id AND n.observed_at IS NOT DISTINCT FROM o.observed_at
    GROUP BY o.endpoint_id
) AS o
JOIN mart.source_freshness AS f USING (source_id);

DROP TABLE newest_listing;

-- Per model, variant, method and statistic, the providers ranked by their current live output
-- speed. Figures of different methods or statistics are ranked apart, never against each other.
-- A source that does not state a variant part (precision, reasoning effort) files its figure
-- under its own variant, so such figures are ranked in their own group. Only point figures
-- (exact or approximate) are ranked: a bound ("up to 740") or a range is not a median. Fresh
-- figures rank before stale ones, and suspect ones after every other: `ranking_rule` says so in
-- every row.
CREATE OR REPLACE VIEW mart.leaderboard AS
WITH speed AS (
    SELECT * FROM mart.current_figures
    WHERE scope IN ('live', 'one_off') AND metric = 'output_tokens_per_s'
      AND mart.point_figure(value, qualifier)
),
ttft AS (
    SELECT endpoint_id, method, statistic, value AS ttft_s, source_id AS ttft_source_id
    FROM mart.current_figures
    WHERE metric = 'ttft_s' AND scope IN ('live', 'one_off') AND value IS NOT NULL
)
SELECT s.model_id, m.name AS model_name, s.precision, s.service_tier, s.reasoning_effort,
       s.region, s.scope, s.method, s.statistic, s.window_minutes,
       CASE WHEN NOT s.suspect THEN rank() OVER variant END AS rank,
       count(*) OVER (PARTITION BY s.model_id, s.precision, s.service_tier, s.reasoning_effort,
                                   s.region, s.method, s.statistic)
           AS endpoints_ranked,
       'within one model, variant, method and statistic: fresh figures first, then the '
       || 'fastest; stale figures after every fresh one; suspect figures listed last, unranked'
           AS ranking_rule,
       s.provider_id, p.name AS provider_name, s.endpoint_id,
       s.value AS output_tokens_per_s, s.qualifier,
       t.ttft_s, t.ttft_source_id,
       s.tier, s.source_id, s.observed_at, s.observed_at_bound, s.stale, s.suspect,
       s.suspect_reason, s.corroborating_sources, s.corroborated_by, s.disputed_by,
       s.source_url, s.snapshot_id, s.observation_id
FROM speed AS s
JOIN core.models AS m USING (model_id)
JOIN core.providers AS p USING (provider_id)
LEFT JOIN ttft AS t USING (endpoint_id, method, statistic)
WINDOW variant AS (
    PARTITION BY s.model_id, s.precision, s.service_tier, s.reasoning_effort, s.region,
                 s.method, s.statistic
    ORDER BY s.suspect, s.stale, s.value DESC
)
ORDER BY s.model_id, s.precision, s.service_tier, s.reasoning_effort NULLS FIRST,
         s.region NULLS FIRST, s.method, s.statistic, rank, s.provider_id, s.endpoint_id;

-- Every record claim beside what the same provider's endpoint sustains live on the same model:
-- its current central (median or p50) live output speed, a point figure, fresh first, then by
-- tier, then the headline's method preference, then newest. A claim's precision must match the
-- live figure's unless one of them does not state it. A claim is only ever compared with its own
-- endpoint: another provider's figure measures another system. Only per-user peaks get a ratio:
-- an aggregate figure (all users of a server together) is never put on the same scale.
CREATE OR REPLACE VIEW mart.peak_vs_live AS
WITH evidence AS (
    SELECT e.claim_id, min(e.tier) AS claim_tier,
           list(DISTINCT e.source_id ORDER BY e.source_id) AS claim_sources,
           min(e.retrieved_at) AS first_retrieved_at
    FROM core.claim_evidence AS e
    GROUP BY e.claim_id
),
live AS (
    SELECT * FROM mart.current_figures
    WHERE metric = 'output_tokens_per_s' AND scope = 'live' AND NOT suspect
      AND mart.point_figure(value, qualifier) AND statistic IN ('median', 'p50')
),
own_endpoint AS (
    SELECT c.claim_id, l.endpoint_id, l.value, l.tier, l.source_id, l.method, l.statistic,
           l.observed_at, l.stale, l.observation_id
    FROM core.claims AS c
    JOIN live AS l
      ON l.provider_id = c.provider_id AND l.model_id = c.model_id
     AND (l.precision = c.precision OR 'unknown' IN (l.precision, c.precision))
    QUALIFY row_number() OVER (
        PARTITION BY c.claim_id ORDER BY l.stale, l.tier, mart.method_preference(l.method),
                                         l.observed_at DESC, l.value DESC, l.endpoint_id
    ) = 1
)
SELECT c.claim_id, c.provider_id, p.name AS provider_name, c.model_id, m.name AS model_name,
       c.endpoint_id, c.hardware, c.scope, c.figure_text, c.value AS claim_value, c.qualifier,
       c.precision, c.technique, c.verified_by, c.claimed, e.claim_tier, e.claim_sources,
       e.first_retrieved_at,
       o.endpoint_id AS live_endpoint_id, o.observation_id AS live_observation_id,
       o.value AS live_value, o.method AS live_method, o.statistic AS live_statistic,
       o.tier AS live_tier, o.source_id AS live_source_id, o.observed_at AS live_observed_at,
       o.stale AS live_stale,
       CASE WHEN c.scope = 'peak_per_user' THEN c.value / o.value END AS peak_to_live_ratio,
       c.notes
FROM core.claims AS c
JOIN evidence AS e USING (claim_id)
JOIN core.providers AS p ON p.provider_id = c.provider_id
JOIN core.models AS m ON m.model_id = c.model_id
LEFT JOIN own_endpoint AS o USING (claim_id)
ORDER BY c.provider_id, c.model_id, c.claim_id;

-- Which platform or catalogue offers which model, from each catalogue's latest usable snapshot
-- (mart.latest_snapshots): a damaged or rejected newer snapshot leaves the last good listing.
CREATE OR REPLACE VIEW mart.platform_models AS
SELECT pm.platform_id, pl.name AS platform_name, pl.kind AS platform_kind,
       pm.platform_model_id, pm.name AS listed_name, pm.model_id, m.name AS model_name,
       m.reviewed AS model_reviewed,
       pm.precision, pm.service_tier, pm.task, pm.publisher, pm.function_calling, pm.beta,
       pm.lora, pm.context_window, pm.price_input_usd_per_mtok, pm.price_output_usd_per_mtok,
       pm.price_cached_input_usd_per_mtok, pm.other_prices,
       pm.planned_deprecation, pm.source_id, pm.snapshot_id, l.url AS source_url,
       pm.observed_at
FROM core.platform_models AS pm
JOIN mart.latest_snapshots AS l ON l.snapshot_id = pm.snapshot_id
JOIN core.platforms AS pl ON pl.platform_id = pm.platform_id
LEFT JOIN core.models AS m ON m.model_id = pm.model_id
ORDER BY pm.platform_id, pm.platform_model_id, pm.snapshot_id;

-- Current figures that independent sources dispute: comparable endpoints, the same metric,
-- scope and measurement, observed within 7 days, more than 10% apart. Side a is the better-tier
-- source (then the first source id), so each pair appears once.
CREATE OR REPLACE VIEW mart.disagreements AS
SELECT p.provider_id, pr.name AS provider_name, p.model_id, m.name AS model_name,
       CASE WHEN p.a_precision <> 'unknown' THEN p.a_precision ELSE p.b_precision END
           AS precision,
       p.service_tier,
       coalesce(p.a_reasoning_effort, p.b_reasoning_effort) AS reasoning_effort,
       p.region, p.metric, p.scope, p.a_method, p.b_method, p.a_statistic AS statistic, p.unit,
       p.a_value, p.b_value,
       (greatest(p.a_value, p.b_value) - least(p.a_value, p.b_value))
           / least(p.a_value, p.b_value) AS relative_difference,
       p.a_source_id, p.a_tier, p.a_observed_at, p.b_source_id, p.b_tier, p.b_observed_at,
       p.a_endpoint_id, p.b_endpoint_id, p.a_quote, p.b_quote,
       p.a_id AS a_observation_id, p.b_id AS b_observation_id
FROM mart.current_pairs AS p
JOIN core.providers AS pr ON pr.provider_id = p.provider_id
JOIN core.models AS m ON m.model_id = p.model_id
WHERE p.disagree AND p.same_measurement AND p.independent
  AND (p.a_tier < p.b_tier OR (p.a_tier = p.b_tier AND p.a_source_id < p.b_source_id))
ORDER BY p.provider_id, p.model_id, p.metric, p.scope, p.a_observed_at, p.a_id, p.b_id;

-- Central figures (median, p50) of different methods from independent sources on comparable
-- endpoints that are more than 10% apart: listed as a gap between methods, never as a dispute
-- (a 30-minute p50 of routed traffic and a 72-hour probe median measure different things).
CREATE OR REPLACE VIEW mart.method_gaps AS
SELECT p.provider_id, p.model_id, p.service_tier, p.region, p.metric, p.scope, p.unit,
       p.a_method, p.a_statistic, p.a_value, p.a_source_id, p.a_observed_at, p.a_endpoint_id,
       p.b_method, p.b_statistic, p.b_value, p.b_source_id, p.b_observed_at, p.b_endpoint_id,
       (greatest(p.a_value, p.b_value) - least(p.a_value, p.b_value))
           / least(p.a_value, p.b_value) AS relative_difference,
       p.a_id AS a_observation_id, p.b_id AS b_observation_id
FROM mart.current_pairs AS p
WHERE p.disagree AND NOT p.same_measurement AND p.independent
  AND p.a_statistic IN ('median', 'p50') AND p.b_statistic IN ('median', 'p50')
  AND p.a_method < p.b_method  -- each pair once
ORDER BY p.provider_id, p.model_id, p.metric, p.a_observed_at, p.a_id, p.b_id;

-- Every statistic of every endpoint, snapshot by snapshot: the long table behind questions such
-- as "the p90 time to first token of every fp8 endpoint of a model", with each figure's scope,
-- method, statistic, window and qualifier.
CREATE OR REPLACE VIEW mart.endpoint_stats AS
SELECT o.endpoint_id, o.provider_id, p.name AS provider_name, p.reviewed AS provider_reviewed,
       o.model_id, m.name AS model_name, m.reviewed AS model_reviewed,
       o.precision, o.service_tier, o.reasoning_effort, o.region, o.endpoint_key,
       o.metric, o.scope, o.method, o.statistic, o.window_minutes, o.value, o.low, o.high,
       o.qualifier, o.unit, o.observed_at, o.observed_at_bound, o.stale, o.suspect,
       o.source_id, o.tier, o.snapshot_id, o.observation_id
FROM mart.observations_as_of AS o
JOIN core.providers AS p USING (provider_id)
JOIN core.models AS m USING (model_id)
WHERE o.scope IN ('live', 'one_off');

-- Who offers which model, from each catalogue's newest usable snapshot: a platform's own
-- catalogue (Cloudflare, OpenRouter's model list, Azure), a catalogue of many providers'
-- catalogues (models.dev), and each endpoint's own newest listing (OpenRouter). Prices in USD per
-- million tokens whatever each source writes.
CREATE OR REPLACE VIEW mart.model_offers AS
WITH offers AS (
    SELECT pm.source_id, pm.snapshot_id, 'platform' AS offered_by_kind,
           pm.platform_id AS offered_by, pm.platform_id, pm.platform_model_id AS catalogue_model_id,
           pm.name AS listed_name, pm.model_id, pm.price_input_usd_per_mtok,
           pm.price_output_usd_per_mtok,
           pm.price_cached_input_usd_per_mtok AS price_cache_read_usd_per_mtok,
           NULL::DOUBLE AS price_cache_write_usd_per_mtok, pm.context_window, pm.function_calling,
           pm.observed_at
    FROM core.platform_models AS pm
    SEMI JOIN mart.latest_snapshots AS l ON l.snapshot_id = pm.snapshot_id
    UNION ALL
    SELECT co.source_id, co.snapshot_id, 'provider', co.provider_id, co.platform_id,
           co.catalogue_model_id, co.name, co.model_id, co.price_input_usd_per_mtok,
           co.price_output_usd_per_mtok, co.price_cache_read_usd_per_mtok,
           co.price_cache_write_usd_per_mtok, co.context_window, co.function_calling,
           co.observed_at
    FROM core.catalogue_offers AS co
    SEMI JOIN mart.latest_snapshots AS l ON l.snapshot_id = co.snapshot_id
    UNION ALL
    SELECT eo.source_id, eo.snapshot_id, 'provider', eo.provider_id, NULL,
           eo.catalogue_model_id || ' @ ' || eo.endpoint_tag, eo.catalogue_model_id, eo.model_id,
           eo.price_input_usd_per_mtok, eo.price_output_usd_per_mtok,
           eo.price_cache_read_usd_per_mtok, eo.price_cache_write_usd_per_mtok, eo.context_window,
           eo.function_calling, eo.observed_at
    FROM mart.endpoint_offers AS eo
)
SELECT o.source_id, o.offered_by_kind, o.offered_by, o.platform_id, o.catalogue_model_id,
       o.listed_name, o.model_id, m.name AS model_name, m.reviewed AS model_reviewed,
       o.price_input_usd_per_mtok, o.price_output_usd_per_mtok, o.price_cache_read_usd_per_mtok,
       o.price_cache_write_usd_per_mtok, o.context_window, o.function_calling, o.snapshot_id,
       o.observed_at
FROM offers AS o
LEFT JOIN core.models AS m ON m.model_id = o.model_id
ORDER BY o.source_id, o.offered_by, o.catalogue_model_id;

-- Model-level figures (Artificial Analysis's medians across providers, and the prices it lists
-- per model): the newest of each model, reasoning effort, metric and method. Never a provider's.
CREATE OR REPLACE VIEW mart.model_figures AS
SELECT f.*, m.name AS model_name, m.reviewed AS model_reviewed,
       mart.is_stale(f.scope, f.observed_at, b.data_date, src.max_age_minutes) AS stale
FROM core.model_figures AS f
JOIN core.models AS m USING (model_id)
JOIN core.sources AS src USING (source_id), core.build_state AS b
QUALIFY row_number() OVER (
    PARTITION BY f.model_id, f.reasoning_effort, f.metric, f.method
    ORDER BY f.observed_at DESC, f.source_id, f.figure_id
) = 1
ORDER BY f.model_id, f.reasoning_effort NULLS FIRST, f.metric, f.method;

-- Entities kept under a source's stable id that no reviewer has confirmed yet, most cited first:
-- what `speedbook resolve --pending` lists for review.
CREATE OR REPLACE VIEW mart.unreviewed_entities AS
WITH cited AS (
    SELECT kind, entity_id, count(*) AS citations
    FROM (SELECT 'provider' AS kind, provider_id AS entity_id FROM core.endpoint_keys
          UNION ALL SELECT 'model', model_id FROM core.endpoint_keys
          UNION ALL SELECT 'model', model_id FROM core.platform_models WHERE model_id IS NOT NULL
          UNION ALL SELECT 'provider', provider_id FROM core.catalogue_offers
          UNION ALL SELECT 'model', model_id FROM core.catalogue_offers WHERE model_id IS NOT NULL
          UNION ALL SELECT 'model', model_id FROM core.model_figures)
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
