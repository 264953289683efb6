-- What each endpoint offers per listing: OpenRouter's API and website (prices, limits, uptime,
-- tool calling) and Vercel's gateway (prices, limits, uptime over its own windows), keyed as their
-- statistics are, so an endpoint without statistics (a poll sent without an API key) is still
-- listed with its prices. Each source's uptime keeps its own windows.
CREATE OR REPLACE VIEW core.endpoint_offers AS
WITH routed AS (
    SELECT k.endpoint_id, k.provider_id, k.model_id, k.precision, k.service_tier,
           k.reasoning_effort, k.region, k.endpoint_key,
           e.model AS catalogue_model_id, e.tag AS endpoint_tag, e.quantization, e.status,
           e.context_length AS context_window, e.max_completion_tokens AS max_output_tokens,
           e.max_prompt_tokens, e.price_input_usd_per_mtok, e.price_output_usd_per_mtok,
           e.price_cache_read_usd_per_mtok, e.price_cache_write_usd_per_mtok, e.discount,
           e.function_calling, e.uptime_last_5m, e.uptime_last_30m, e.uptime_last_1d,
           e.member_url, e.observed_at, e.snapshot_id, e.source_id
    FROM staging.openrouter_endpoints AS e
    JOIN core.endpoint_keys AS k
      ON k.frame = 'openrouter_endpoints' AND k.model_label = e.model AND k.endpoint_label = e.tag
     AND k.precision_label = e.precision
),
website AS (
    SELECT DISTINCT ON (e.snapshot_id, k.endpoint_id)
           k.endpoint_id, k.provider_id, k.model_id, k.precision, k.service_tier,
           k.reasoning_effort, k.region, k.endpoint_key,
           e.model_slug AS catalogue_model_id, e.tag AS endpoint_tag, e.quantization, e.status,
           e.context_length AS context_window, e.max_completion_tokens AS max_output_tokens,
           e.max_prompt_tokens, e.price_input_usd_per_mtok, e.price_output_usd_per_mtok,
           e.price_cache_read_usd_per_mtok, e.price_cache_write_usd_per_mtok, e.discount,
           e.function_calling, e.observed_at, e.snapshot_id, e.source_id
    FROM staging.openrouter_frontend_endpoints AS e
    JOIN core.endpoint_keys AS k
      ON k.frame = 'openrouter_frontend_endpoints'
     AND k.model_label = e.permaslug || ':' || e.variant AND k.endpoint_label = e.endpoint_id
     AND k.precision_label = e.precision
    ORDER BY e.snapshot_id, k.endpoint_id, k.tier_label
),
gateway AS (
    SELECT k.endpoint_id, k.provider_id, k.model_id, k.precision, k.service_tier,
           k.reasoning_effort, k.region, k.endpoint_key,
           v.model AS catalogue_model_id, v.provider_name AS endpoint_tag, v.status,
           v.context_length AS context_window, v.max_completion_tokens AS max_output_tokens,
           v.price_input_usd_per_mtok, v.price_output_usd_per_mtok,
           v.price_cache_read_usd_per_mtok, v.price_cache_write_usd_per_mtok, v.function_calling,
           v.uptime_last_15m, v.uptime_last_1h, v.uptime_last_1d, v.member_url, v.observed_at,
           v.snapshot_id, v.source_id
    FROM staging.vercel_gateway_endpoints AS v
    JOIN core.endpoint_keys AS k
      ON k.frame = 'vercel_gateway_endpoints' AND k.model_label = v.model
     AND k.endpoint_label = v.provider_name
)
SELECT o.*, g.retrieved_at_bound AS observed_at_bound, g.retrieved_at, g.tier
FROM (
    SELECT * FROM routed
    UNION ALL BY NAME SELECT * FROM website
    UNION ALL BY NAME SELECT * FROM gateway
) AS o
JOIN core.snapshot_grades AS g USING (snapshot_id);

-- Model-level figures: Artificial Analysis's medians are about a model across the providers it
-- measures, never one provider's endpoint, so they live here and not in core.observations; with
-- them, the prices it lists per model.
CREATE OR REPLACE VIEW core.model_figures AS
WITH named AS (
    SELECT a.snapshot_id, a.aa_model_id, a.name, r.entity_id AS model_id,
           r.reasoning_effort, a.price_blended_usd_per_mtok, a.price_input_usd_per_mtok,
           a.price_output_usd_per_mtok, a.observed_at, a.source_id
    FROM staging.aa_models AS a
    JOIN core.identified('model') AS r ON r.label = a.name
),
measured AS (
    SELECT md5(concat_ws('|', f.snapshot_id, 'aa-model', f.aa_model_id, f.metric)) AS figure_id,
           n.model_id, n.reasoning_effort, n.name AS label, f.metric, 'live' AS scope,
           f.statistic, f.value,
           CASE WHEN f.metric = 'output_tokens_per_s' THEN 'tokens/s' ELSE 's' END AS unit,
           f.window_minutes, f.method,
           to_json({prompt_length_tokens: f.prompt_length_tokens,
                    parallel_queries: f.parallel_queries})::VARCHAR AS workload,
           f.observed_at, f.snapshot_id, f.source_id
    FROM staging.aa_model_figures AS f
    JOIN named AS n USING (snapshot_id, aa_model_id)
),
listed AS (
    SELECT md5(concat_ws('|', snapshot_id, 'aa-model', aa_model_id, metric)) AS figure_id,
           model_id, reasoning_effort, name AS label, metric, 'list_price' AS scope,
           NULL::VARCHAR AS statistic, value, 'USD per 1M tokens' AS unit,
           NULL::BIGINT AS window_minutes, 'listed price' AS method, NULL::VARCHAR AS workload,
           observed_at, snapshot_id, source_id
    FROM (UNPIVOT named
          ON price_blended_usd_per_mtok, price_input_usd_per_mtok, price_output_usd_per_mtok
          INTO NAME metric VALUE value)
)
SELECT f.*, g.retrieved_at, g.retrieved_at_bound AS observed_at_bound, g.tier
FROM (SELECT * FROM measured UNION ALL BY NAME SELECT * FROM listed) AS f
JOIN core.snapshot_grades AS g USING (snapshot_id);

-- Offers of a catalogue of many providers' catalogues (models.dev), per snapshot: the provider and
-- the model under their reviewed or unreviewed entities, and the reviewed platform whose listing
-- it is (platforms.toml catalogue_providers).
CREATE OR REPLACE VIEW core.catalogue_offers AS
SELECT p.entity_id AS provider_id, ps.platform_id, o.provider_id AS catalogue_provider_id,
       o.platform_model_id AS catalogue_model_id, m.entity_id AS model_id,
       m.region,  -- a region profile the model id names (Bedrock's us./eu./global.)
       o.name, o.family,
       o.price_input_usd_per_mtok, o.price_output_usd_per_mtok, o.price_cache_read_usd_per_mtok,
       o.price_cache_write_usd_per_mtok, o.context_window, o.max_output_tokens,
       o.function_calling, o.reasoning, o.open_weights, o.release_date, o.last_updated, o.status,
       o.unread, o.provider_doc_url, o.observed_at, o.snapshot_id, o.source_id
FROM staging.models_dev_offers AS o
SEMI JOIN core.build_scope USING (snapshot_id)
JOIN core.identified('provider') AS p ON p.label = o.provider_id
LEFT JOIN core.identified('model') AS m ON m.label = o.platform_model_id
LEFT JOIN core.platform_sources AS ps
  ON ps.source_id = o.source_id AND ps.catalogue_provider_id = o.provider_id;

-- Catalogue entries from every catalogue snapshot the build reads, with the model (reviewed, or
-- unreviewed under the catalogue's id) and the precision and service tier the name carries.
CREATE OR REPLACE VIEW core.platform_models AS
SELECT ps.platform_id, c.platform_model_id, c.name, c.publisher, c.task,
       r.entity_id AS model_id, coalesce(r.precision, 'unknown') AS precision,
       coalesce(r.service_tier, 'standard') AS service_tier, r.region,
       c.function_calling, c.beta, c.lora, c.context_window,
       c.price_input_usd_per_mtok, c.price_output_usd_per_mtok,
       c.price_cached_input_usd_per_mtok, c.other_prices, c.planned_deprecation,
       c.source_id, c.snapshot_id, c.observed_at
FROM staging.catalogue_entries AS c
SEMI JOIN core.build_scope USING (snapshot_id)
JOIN core.platform_sources AS ps
  ON ps.source_id = c.source_id AND ps.catalogue_provider_id IS NULL
LEFT JOIN core.identified('model') AS r ON r.label = c.platform_model_id;

-- How each snapshot's extraction went, so the core layer (and mart.source_health) says which
-- snapshots were read and which failed without reaching into staging.
CREATE OR REPLACE VIEW core.extractions AS
SELECT snapshot_id, source_id, format, parser_version, status, error,
       coalesce(list_sum(map_values(json_transform(row_counts, '"MAP(VARCHAR, BIGINT)"'))), 0)
           AS rows_extracted,
       row_counts
FROM staging.extractions;
