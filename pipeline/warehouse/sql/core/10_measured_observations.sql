-- Every figure a source measured itself (Artificial Analysis's pages, LLMPerf runs, OpenRouter's
-- statistics), from every successfully extracted snapshot, in one long table. Staged rows join
-- the label resolutions. A prose label no alias resolves is not joined: its figures are held back
-- from the release (the build reports them); a source's stable ids always join, to a reviewed
-- entity or an unreviewed one of their own (pipeline/normalise/labels.py). Every figure carries
-- how it was measured: method, statistic and window.
-- Derived a batch of snapshots at a time (derive_batch, pipeline/warehouse/core.py): a figure
-- depends on its own snapshot only, and at 90 days of polls one join of every staged figure
-- spilled gigabytes to disk.
INSERT INTO core.observations BY NAME
WITH ok AS (
    SELECT snapshot_id FROM derive_batch
),
providers AS (FROM core.named('provider')),
models AS (FROM core.named('model')),
measured AS (FROM core.measured()),
aa AS (
    SELECT a.*, p.entity_id AS provider_id, m.entity_id AS model_id,
           core.pick_precision(p.precision, m.precision) AS precision,
           core.pick_service_tier(p.service_tier, m.service_tier) AS service_tier,
           coalesce(p.reasoning_effort, m.reasoning_effort) AS reasoning_effort
    FROM staging.aa_endpoints AS a
    SEMI JOIN ok USING (snapshot_id)
    JOIN providers AS p ON p.label = a.endpoint_label
    JOIN models AS m ON m.label = a.page_model
),
aa_long AS (
    SELECT *, 'output_tokens_per_s' AS metric, output_tokens_per_s AS figure, 'tokens/s' AS unit
    FROM aa WHERE output_tokens_per_s IS NOT NULL
    UNION ALL
    SELECT *, 'ttft_s', ttft_s, 's' FROM aa WHERE ttft_s IS NOT NULL
    UNION ALL
    SELECT *, 'price_blended_usd_per_mtok', price_blended_usd_per_mtok, 'USD per 1M tokens'
    FROM aa WHERE price_blended_usd_per_mtok IS NOT NULL
),
aa_rows AS (
    SELECT md5(concat_ws('|', snapshot_id, 'aa', endpoint_label, metric)) AS observation_id,
           provider_id, model_id, precision, service_tier, reasoning_effort,
           NULL::VARCHAR AS region, metric,
           'live_median' AS scope, 'measured' AS role, ms.method,
           -- a price is a list price, not a statistic of requests
           CASE WHEN metric LIKE 'price%' THEN NULL ELSE ms.statistic END AS statistic,
           CASE WHEN metric LIKE 'price%' THEN NULL ELSE ms.window_minutes END AS window_minutes,
           NULL::VARCHAR AS cited_source_id,
           figure AS value, NULL::DOUBLE AS low, NULL::DOUBLE AS high, NULL AS qualifier, unit,
           observed_at, snapshot_id, source_id, 'aa_endpoints' AS origin,
           endpoint_label || ' · ' || page_model || ' · ' || figure || ' ' || unit AS quote,
           NULL AS workload
    FROM aa_long
    JOIN measured AS ms USING (source_id)
),
perf AS (
    SELECT r.*, p.entity_id AS provider_id, m.entity_id AS model_id,
           core.pick_precision(p.precision, m.precision) AS precision,
           core.pick_service_tier(p.service_tier, m.service_tier) AS service_tier,
           coalesce(p.reasoning_effort, m.reasoning_effort) AS reasoning_effort,
           to_json({input_tokens: mean_input_tokens, output_tokens: mean_output_tokens,
                    concurrency: concurrency, completed_requests: completed_requests,
                    error_rate: error_rate})::VARCHAR AS workload
    FROM staging.llmperf_runs AS r
    SEMI JOIN ok USING (snapshot_id)
    JOIN providers AS p ON p.label = r.framework
    JOIN models AS m ON m.label = r.model_label
),
perf_long AS (
    SELECT *, 'output_tokens_per_s' AS metric, output_tokens_per_s AS figure, 'tokens/s' AS unit,
           'p50 per-request output throughput' AS what FROM perf
    UNION ALL
    SELECT *, 'ttft_s', ttft_s, 's', 'p50 time to first token' FROM perf WHERE ttft_s IS NOT NULL
    UNION ALL
    SELECT *, 'e2e_s', e2e_s, 's', 'p50 end-to-end latency' FROM perf WHERE e2e_s IS NOT NULL
),
perf_rows AS (
    SELECT md5(concat_ws('|', snapshot_id, 'llmperf', metric)) AS observation_id,
           provider_id, model_id, precision, service_tier, reasoning_effort,
           NULL::VARCHAR AS region, metric,
           'live_median' AS scope, 'measured' AS role,
           ms.method, ms.statistic, ms.window_minutes, NULL::VARCHAR AS cited_source_id,
           figure AS value, NULL::DOUBLE AS low, NULL::DOUBLE AS high,
           NULL AS qualifier, unit, observed_at, snapshot_id, source_id,
           'llmperf_runs' AS origin,
           model_label || ' on ' || framework || ': ' || what || ' ' || round(figure, 3) || ' '
               || unit AS quote,
           workload
    FROM perf_long
    JOIN measured AS ms USING (source_id)
),
-- OpenRouter's statistics of live routed traffic: one row per endpoint, metric and percentile.
-- The endpoint: provider from the tag root, model from the response's id, precision from the
-- quantization (else the tag suffix), service tier and region from the tag suffix.
routed AS (
    SELECT e.*, p.entity_id AS provider_id, m.entity_id AS model_id,
           core.pick_precision(e.precision, coalesce(t.precision, 'unknown')) AS endpoint_precision,
           core.pick_service_tier(coalesce(t.service_tier, 'standard'), m.service_tier)
               AS endpoint_service_tier,
           coalesce(t.reasoning_effort, m.reasoning_effort) AS endpoint_reasoning_effort,
           t.entity_id AS endpoint_region
    FROM staging.openrouter_endpoints AS e
    SEMI JOIN ok USING (snapshot_id)
    JOIN core.identified('provider') AS p ON p.label = e.tag_root
    JOIN core.identified('model') AS m ON m.label = e.model
    LEFT JOIN staging.label_resolution AS t ON t.kind = 'endpoint_tag' AND t.label = e.tag_suffix
),
-- each percentile column (<metric>_<statistic>, pipeline/schema/staging.py) a row of its own;
-- UNPIVOT leaves out a null one: not measured
routed_figures AS (
    SELECT * EXCLUDE (percentile),
           substr(percentile, 1, length(percentile) - 4) AS metric,
           right(percentile, 3) AS statistic
    FROM (
        UNPIVOT routed
        ON output_tokens_per_s_p50, output_tokens_per_s_p75, output_tokens_per_s_p90,
           output_tokens_per_s_p99, ttft_s_p50, ttft_s_p75, ttft_s_p90, ttft_s_p99
        INTO NAME percentile VALUE value
    )
),
routed_rows AS (
    SELECT md5(concat_ws('|', snapshot_id, 'openrouter', member_url, tag, metric, statistic))
               AS observation_id,
           provider_id, model_id, endpoint_precision AS precision,
           endpoint_service_tier AS service_tier,
           endpoint_reasoning_effort AS reasoning_effort, endpoint_region AS region,
           metric, 'live_median' AS scope, 'measured' AS role,
           method, statistic, window_minutes, NULL::VARCHAR AS cited_source_id,
           value, NULL::DOUBLE AS low, NULL::DOUBLE AS high, NULL AS qualifier,
           CASE WHEN metric = 'ttft_s' THEN 's' ELSE 'tokens/s' END AS unit,
           observed_at, snapshot_id, source_id, 'openrouter_endpoints' AS origin,
           provider_name || ' (' || tag || ') · ' || model || ' · ' || statistic || ' '
               || metric || ' ' || round(value, 3) AS quote,
           NULL AS workload
    FROM routed_figures
),
everything AS (
    SELECT * FROM aa_rows
    UNION ALL BY NAME SELECT * FROM perf_rows
    UNION ALL BY NAME SELECT * FROM routed_rows
)
SELECT e.*,
       core.endpoint_id(e.provider_id, e.model_id, e.precision, e.service_tier,
                        e.reasoning_effort, e.region) AS endpoint_id,
       e.source_id AS lineage,  -- its own measurement
       s.retrieved_at,
       src.tier
FROM everything AS e
JOIN core.snapshots AS s USING (snapshot_id)
JOIN core.sources AS src ON src.source_id = e.source_id;
