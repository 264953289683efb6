-- Derived a batch of snapshots at a time (derive_batch, pipeline/warehouse/core.py), like the
-- measured observations: each row depends on its own snapshot only.

-- What each endpoint offers per OpenRouter snapshot (prices, limits, uptime, tool calling), keyed
-- like its statistics (10_measured_observations.sql), so an endpoint without statistics (no API
-- key) is still listed with its prices.
INSERT INTO core.endpoint_offers BY NAME
SELECT core.endpoint_id(p.entity_id, m.entity_id,
                        core.pick_precision(e.precision, coalesce(t.precision, 'unknown')),
                        core.pick_service_tier(coalesce(t.service_tier, 'standard'),
                                               m.service_tier),
                        coalesce(t.reasoning_effort, m.reasoning_effort), t.entity_id)
           AS endpoint_id,
       p.entity_id AS provider_id, m.entity_id AS model_id,
       core.pick_precision(e.precision, coalesce(t.precision, 'unknown')) AS precision,
       core.pick_service_tier(coalesce(t.service_tier, 'standard'), m.service_tier)
           AS service_tier,
       coalesce(t.reasoning_effort, m.reasoning_effort) AS reasoning_effort,
       t.entity_id AS region,
       e.model AS catalogue_model_id, e.tag AS endpoint_tag, e.quantization, e.status,
       e.context_length AS context_window, e.max_completion_tokens AS max_output_tokens,
       e.price_input_usd_per_mtok, e.price_output_usd_per_mtok, e.price_cache_read_usd_per_mtok,
       e.discount, e.function_calling, e.uptime_last_30m, e.uptime_last_1d, e.member_url,
       e.observed_at, e.snapshot_id, e.source_id, src.tier
FROM staging.openrouter_endpoints AS e
SEMI JOIN derive_batch USING (snapshot_id)
JOIN core.identified('provider') AS p ON p.label = e.tag_root
JOIN core.identified('model') AS m ON m.label = e.model
LEFT JOIN staging.label_resolution AS t ON t.kind = 'endpoint_tag' AND t.label = e.tag_suffix
JOIN core.sources AS src ON src.source_id = e.source_id;

-- Offers of a catalogue of many providers' catalogues (models.dev), per snapshot: the provider and
-- the model under their reviewed or unreviewed entities, and the reviewed platform whose
-- listing it is (platforms.toml catalogue_providers).
INSERT INTO core.catalogue_offers BY NAME
SELECT p.entity_id AS provider_id, ps.platform_id, o.provider_id AS catalogue_provider_id,
       o.platform_model_id AS catalogue_model_id, m.entity_id AS model_id, o.name,
       o.price_input_usd_per_mtok, o.price_output_usd_per_mtok, o.price_cache_read_usd_per_mtok,
       o.context_window, o.max_output_tokens, o.function_calling, o.reasoning, o.open_weights,
       o.release_date, o.status, o.observed_at, o.snapshot_id, o.source_id
FROM staging.models_dev_offers AS o
SEMI JOIN derive_batch USING (snapshot_id)
JOIN core.identified('provider') AS p ON p.label = o.provider_id
LEFT JOIN core.identified('model') AS m ON m.label = o.platform_model_id
LEFT JOIN staging.platform_sources AS ps
  ON ps.source_id = o.source_id AND ps.catalogue_provider_id = o.provider_id;

-- Model-level figures: Artificial Analysis's medians are about a model across the providers it
-- measures, never one provider's endpoint, so they live here and not in core.observations.
INSERT INTO core.model_figures BY NAME
SELECT md5(concat_ws('|', f.snapshot_id, 'aa-model', f.aa_model_id, f.metric)) AS figure_id,
       r.entity_id AS model_id, r.reasoning_effort, a.name AS label, f.metric, f.statistic,
       f.value, CASE WHEN f.metric = 'output_tokens_per_s' THEN 'tokens/s' ELSE 's' END AS unit,
       f.window_minutes, f.method,
       to_json({prompt_length_tokens: f.prompt_length_tokens,
                parallel_queries: f.parallel_queries})::VARCHAR AS workload,
       f.observed_at, s.retrieved_at, f.snapshot_id, f.source_id, src.tier
FROM staging.aa_model_figures AS f
SEMI JOIN derive_batch USING (snapshot_id)
JOIN staging.aa_models AS a USING (snapshot_id, aa_model_id)
JOIN core.identified('model') AS r ON r.label = a.name
JOIN core.snapshots AS s ON s.snapshot_id = f.snapshot_id
JOIN core.sources AS src ON src.source_id = f.source_id;
