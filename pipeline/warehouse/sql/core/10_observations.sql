-- Every figure from every successfully extracted snapshot, in one long table.
-- Staged rows join the label resolutions; the build stops before this step if any label in a
-- figure is unresolved, so the inner joins below never drop a row silently.
INSERT INTO core.observations BY NAME
WITH ok AS (
    -- every usable snapshot, or only those not loaded yet (see pipeline/core.py build_core)
    SELECT snapshot_id FROM staging.observation_scope
),
providers AS (
    SELECT * FROM staging.label_resolution WHERE kind = 'provider' AND status = 'resolved'
),
models AS (
    SELECT * FROM staging.label_resolution WHERE kind = 'model' AND status = 'resolved'
),
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
           provider_id, model_id, precision, service_tier, reasoning_effort, metric,
           'live_median' AS scope, 'measured' AS role,
           figure AS value, NULL::DOUBLE AS low, NULL::DOUBLE AS high, NULL AS qualifier, unit,
           observed_at, snapshot_id, source_id, 'aa_endpoints' AS origin,
           endpoint_label || ' · ' || page_model || ' · ' || figure || ' ' || unit AS quote,
           NULL AS workload
    FROM aa_long
),
compiled AS (
    SELECT c.*, p.entity_id AS provider_id, m.entity_id AS model_id,
           core.pick_precision(p.precision, m.precision) AS precision,
           core.pick_service_tier(p.service_tier, m.service_tier) AS service_tier,
           coalesce(p.reasoning_effort, m.reasoning_effort) AS reasoning_effort
    FROM staging.compilation_figures AS c
    SEMI JOIN ok USING (snapshot_id)
    JOIN providers AS p ON p.label = c.provider_label
    JOIN models AS m ON m.label = c.model_label
),
compiled_rows AS (
    SELECT md5(concat_ws('|', snapshot_id, 'compilation', table_name, row_number, role, figure_text))
               AS observation_id,
           provider_id, model_id, precision, service_tier, reasoning_effort,
           'output_tokens_per_s' AS metric, 'live_median' AS scope, role,
           value, low, high, qualifier, 'tokens/s' AS unit,
           observed_at, snapshot_id, source_id, 'compilation_figures' AS origin,
           figure_text || ' · ' || model_label AS quote, NULL AS workload
    FROM compiled
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
           provider_id, model_id, precision, service_tier, reasoning_effort, metric,
           'live_median' AS scope, 'measured' AS role,
           figure AS value, NULL::DOUBLE AS low, NULL::DOUBLE AS high,
           NULL AS qualifier, unit, observed_at, snapshot_id, source_id,
           'llmperf_runs' AS origin,
           model_label || ' on ' || framework || ': ' || what || ' ' || round(figure, 3) || ' '
               || unit AS quote,
           workload
    FROM perf_long
),
claimed AS (
    SELECT e.snapshot_id, e.source_id, min(e.observed_at) AS observed_at, c.*,
           string_agg(e.quote, ' … ' ORDER BY e.quote) AS quotes
    FROM staging.claim_evidence AS e
    SEMI JOIN ok USING (snapshot_id)
    JOIN staging.reviewed_claims AS c USING (claim_id)
    GROUP BY ALL
),
claim_rows AS (
    SELECT md5(concat_ws('|', snapshot_id, 'claim', claim_id)) AS observation_id,
           provider_id, model_id, precision, 'standard' AS service_tier,
           NULL AS reasoning_effort, 'output_tokens_per_s' AS metric, scope, 'claim' AS role,
           value, NULL::DOUBLE AS low, NULL::DOUBLE AS high, qualifier, 'tokens/s' AS unit,
           observed_at, snapshot_id, source_id, 'claim_evidence' AS origin,
           quotes AS quote, NULL AS workload
    FROM claimed
),
everything AS (
    SELECT * FROM aa_rows
    UNION ALL BY NAME SELECT * FROM compiled_rows
    UNION ALL BY NAME SELECT * FROM perf_rows
    UNION ALL BY NAME SELECT * FROM claim_rows
)
SELECT e.*,
       core.endpoint_id(e.provider_id, e.model_id, e.precision, e.service_tier, e.reasoning_effort)
           AS endpoint_id,
       s.retrieved_at,
       src.tier
FROM everything AS e
JOIN core.snapshots AS s USING (snapshot_id)
JOIN core.sources AS src ON src.source_id = e.source_id;

INSERT INTO core.endpoints BY NAME
SELECT DISTINCT endpoint_id, provider_id, model_id, precision, service_tier, reasoning_effort
FROM core.observations;

-- Context figures of compilation rows: a model class, a range across models, another model.
INSERT INTO core.context_figures BY NAME
SELECT p.entity_id AS provider_id, c.figure_text, c.value, c.low, c.high, c.qualifier,
       c.applies_to, m.entity_id AS model_id, c.observed_at, c.snapshot_id, c.source_id,
       src.tier, c.row_number
FROM staging.compilation_figures AS c
SEMI JOIN build_scope USING (snapshot_id)
JOIN staging.label_resolution AS p
    ON p.kind = 'provider' AND p.label = c.provider_label AND p.status = 'resolved'
LEFT JOIN staging.label_resolution AS m
    ON m.kind = 'model' AND m.label = c.model_label AND m.status = 'resolved'
JOIN core.sources AS src ON src.source_id = c.source_id
WHERE c.role = 'context';
