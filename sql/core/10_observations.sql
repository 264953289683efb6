-- core.figures_from_staging: every measured figure of every snapshot the build reads, computed
-- from the facts in the shape their sources give them (staging: one row per endpoint x poll with
-- its percentiles as columns, one row per run, ...). Every row carries how it was measured
-- (scope, method, statistic, window) exactly as its source says it: a p90 is a p90, a one-off run
-- is a one-off run, a listed price is not a measurement. A figure depends only on its own
-- snapshot's rows, the snapshot's grade, the key mapping and these rules, so a build keeps them
-- in core.measured_observations and computes only the new snapshots' (pipeline/warehouse/
-- measured.py).
CREATE OR REPLACE VIEW core.figures_from_staging AS
WITH measured AS (FROM core.measured()),
-- Artificial Analysis's provider pages: 72-hour medians of its fixed-workload probes, and the
-- blended price it lists per endpoint
aa AS (
    SELECT a.*, k.endpoint_id, k.provider_id, k.model_id, k.precision, k.service_tier,
           k.reasoning_effort, k.region, k.endpoint_key, g.tier, g.qualifier AS graded_qualifier, g.retrieved_at, g.retrieved_at_bound
    FROM staging.aa_endpoints AS a
    JOIN core.snapshot_grades AS g USING (snapshot_id)
    JOIN core.endpoint_keys AS k
      ON k.frame = 'aa_endpoints' AND k.model_label = a.page_model
     AND k.endpoint_label = a.endpoint_label
),
aa_rows AS (
    SELECT md5(concat_ws('|', snapshot_id, 'aa', endpoint_label, metric)) AS observation_id,
           *,
           CASE WHEN metric LIKE 'price%' THEN 'list_price' ELSE 'live' END AS scope,
           'measured' AS role,
           CASE WHEN metric LIKE 'price%' THEN 'USD per 1M tokens'
                WHEN metric = 'ttft_s' THEN 's' ELSE 'tokens/s' END AS unit,
           endpoint_label || ' · ' || page_model || ' · ' || value AS quote
    FROM (UNPIVOT aa ON output_tokens_per_s, ttft_s, price_blended_usd_per_mtok
          INTO NAME metric VALUE value)
),
aa_figures AS (
    SELECT r.observation_id, r.endpoint_id, r.provider_id, r.model_id, r.precision,
           r.service_tier, r.reasoning_effort, r.region, r.endpoint_key, r.metric, r.scope,
           CASE WHEN r.scope = 'list_price' THEN 'listed price' ELSE ms.method END AS method,
           CASE WHEN r.scope = 'list_price' THEN NULL ELSE ms.statistic END AS statistic,
           CASE WHEN r.scope = 'list_price' THEN NULL ELSE ms.window_minutes END
               AS window_minutes,
           NULL::VARCHAR AS cited_source_id, r.source_id AS lineage,
           r.value, NULL::DOUBLE AS low, NULL::DOUBLE AS high,
           r.graded_qualifier AS qualifier, r.unit, r.observed_at, r.retrieved_at_bound AS observed_at_bound,
           r.retrieved_at, r.snapshot_id, r.source_id, r.tier, 'aa_endpoints' AS origin, r.role,
           r.quote, NULL::VARCHAR AS workload, false AS suspect, NULL::VARCHAR AS suspect_reason
    FROM aa_rows AS r
    JOIN measured AS ms USING (source_id)
),
-- LLMPerf run summaries: one run of a fixed workload at concurrency 5, its per-request medians. A
-- request's output throughput is at least its output tokens over its end-to-end time (generation
-- takes part of that time); a run whose median throughput is under a third of its own median
-- tokens over median latency contradicts itself beyond the slack of comparing medians: suspect.
perf AS (
    SELECT r.*, k.endpoint_id, k.provider_id, k.model_id, k.precision, k.service_tier,
           k.reasoning_effort, k.region, k.endpoint_key, g.tier, g.qualifier AS graded_qualifier, g.retrieved_at,
           g.retrieved_at_bound,
           r.mean_output_tokens / nullif(r.e2e_s, 0) AS implied_tokens_per_s
    FROM staging.llmperf_runs AS r
    JOIN core.snapshot_grades AS g USING (snapshot_id)
    JOIN core.endpoint_keys AS k
      ON k.frame = 'llmperf_runs' AND k.model_label = r.model_label
     AND k.endpoint_label = r.framework
),
perf_checked AS (
    SELECT *,
           coalesce(output_tokens_per_s * 3 < implied_tokens_per_s, false) AS suspect,
           CASE WHEN output_tokens_per_s * 3 < implied_tokens_per_s
                THEN 'its throughput, ' || round(output_tokens_per_s, 2) || ' tokens/s, is under a '
                     || 'third of its own ' || mean_output_tokens || ' output tokens in '
                     || round(e2e_s, 2) || ' s (' || round(implied_tokens_per_s, 1) || ' tokens/s)'
           END AS suspect_reason
    FROM perf
),
perf_figures AS (
    SELECT md5(concat_ws('|', snapshot_id, 'llmperf', metric)) AS observation_id,
           endpoint_id, provider_id, model_id, precision, service_tier, reasoning_effort, region,
           endpoint_key, metric, 'one_off' AS scope, ms.method, ms.statistic, ms.window_minutes,
           NULL::VARCHAR AS cited_source_id, source_id AS lineage, value,
           NULL::DOUBLE AS low, NULL::DOUBLE AS high, graded_qualifier AS qualifier,
           CASE WHEN metric = 'output_tokens_per_s' THEN 'tokens/s' ELSE 's' END AS unit,
           observed_at, retrieved_at_bound AS observed_at_bound, retrieved_at, snapshot_id,
           source_id, tier, 'llmperf_runs' AS origin, 'measured' AS role,
           model_label || ' on ' || framework || ': p50 ' || metric || ' ' || round(value, 3)
               AS quote,
           to_json({input_tokens: mean_input_tokens, output_tokens: mean_output_tokens,
                    concurrency: concurrency, completed_requests: completed_requests,
                    error_rate: error_rate})::VARCHAR AS workload,
           suspect, suspect_reason
    FROM (UNPIVOT perf_checked ON output_tokens_per_s, ttft_s, e2e_s
          INTO NAME metric VALUE value)
    JOIN measured AS ms USING (source_id)
),
-- OpenRouter's statistics of live routed traffic: per endpoint and poll, p50 to p99 over 30
-- minutes. Percentiles of one row that fall as the percentile rises contradict each other: the
-- row's figures are suspect.
routed AS (
    SELECT e.* EXCLUDE (precision), k.endpoint_id, k.provider_id, k.model_id, k.precision, k.service_tier,
           k.reasoning_effort, k.region, k.endpoint_key, g.tier, g.qualifier AS graded_qualifier, g.retrieved_at,
           g.retrieved_at_bound,
           NOT coalesce(
               list_sort(list_filter([output_tokens_per_s_p50, output_tokens_per_s_p75,
                                      output_tokens_per_s_p90, output_tokens_per_s_p99],
                                     lambda v: v IS NOT NULL))
                 = list_filter([output_tokens_per_s_p50, output_tokens_per_s_p75,
                                output_tokens_per_s_p90, output_tokens_per_s_p99],
                               lambda v: v IS NOT NULL)
               AND list_sort(list_filter([ttft_s_p50, ttft_s_p75, ttft_s_p90, ttft_s_p99],
                                         lambda v: v IS NOT NULL))
                 = list_filter([ttft_s_p50, ttft_s_p75, ttft_s_p90, ttft_s_p99],
                               lambda v: v IS NOT NULL),
               true) AS suspect
    FROM staging.openrouter_endpoints AS e
    JOIN core.snapshot_grades AS g USING (snapshot_id)
    JOIN core.endpoint_keys AS k
      ON k.frame = 'openrouter_endpoints' AND k.model_label = e.model
     AND k.endpoint_label = e.tag AND k.precision_label = e.precision
),
-- OpenRouter's website statistics, per endpoint, capture and service tier (statsByTier): p50 to
-- p99 over 30 minutes, with the requests they are of. The untiered `stats` block is left out: it
-- pools the tiers the other blocks give one by one (README, what is left out).
frontend AS (
    SELECT s.* EXCLUDE (endpoint_id, service_tier), s.endpoint_id AS openrouter_endpoint_id,
           k.endpoint_id, k.provider_id, k.model_id, k.precision, k.service_tier,
           k.reasoning_effort, k.region, k.endpoint_key, e.tag, e.provider_name, e.model_slug,
           g.tier, g.qualifier AS graded_qualifier, g.retrieved_at, g.retrieved_at_bound,
           NOT coalesce(
               list_sort(list_filter([output_tokens_per_s_p50, output_tokens_per_s_p75,
                                      output_tokens_per_s_p90, output_tokens_per_s_p95,
                                      output_tokens_per_s_p99], lambda v: v IS NOT NULL))
                 = list_filter([output_tokens_per_s_p50, output_tokens_per_s_p75,
                                output_tokens_per_s_p90, output_tokens_per_s_p95,
                                output_tokens_per_s_p99], lambda v: v IS NOT NULL)
               AND list_sort(list_filter([ttft_s_p50, ttft_s_p75, ttft_s_p90, ttft_s_p95,
                                          ttft_s_p99], lambda v: v IS NOT NULL))
                 = list_filter([ttft_s_p50, ttft_s_p75, ttft_s_p90, ttft_s_p95, ttft_s_p99],
                               lambda v: v IS NOT NULL),
               true) AS suspect
    FROM staging.openrouter_frontend_stats AS s
    JOIN core.snapshot_grades AS g USING (snapshot_id)
    JOIN staging.openrouter_frontend_endpoints AS e
      USING (snapshot_id, permaslug, variant, endpoint_id)
    JOIN core.endpoint_keys AS k
      ON k.frame = 'openrouter_frontend_endpoints'
     AND k.model_label = s.permaslug || ':' || s.variant AND k.endpoint_label = s.endpoint_id
     AND k.precision_label = e.precision AND k.tier_label = s.service_tier
),
frontend_figures AS (
    SELECT md5(concat_ws('|', snapshot_id, 'openrouter-frontend', permaslug, variant,
                         openrouter_endpoint_id, block, percentile)) AS observation_id,
           endpoint_id, provider_id, model_id, precision, service_tier, reasoning_effort, region,
           endpoint_key,
           substr(percentile, 1, length(percentile) - 4) AS metric, 'live' AS scope, method,
           right(percentile, 3) AS statistic, window_minutes,
           NULL::VARCHAR AS cited_source_id, source_id AS lineage, value,
           NULL::DOUBLE AS low, NULL::DOUBLE AS high, graded_qualifier AS qualifier,
           CASE WHEN percentile LIKE 'ttft%' THEN 's' ELSE 'tokens/s' END AS unit,
           observed_at, retrieved_at_bound AS observed_at_bound, retrieved_at, snapshot_id,
           source_id, tier, 'openrouter_frontend_stats' AS origin, 'measured' AS role,
           provider_name || ' (' || tag || ', ' || block || ') · ' || model_slug || ' · '
               || right(percentile, 3) || ' ' || substr(percentile, 1, length(percentile) - 4)
               || ' ' || round(value, 3) || ' of ' || coalesce(request_count::VARCHAR, '?')
               || ' requests' AS quote,
           to_json({requests: request_count})::VARCHAR AS workload, suspect,
           CASE WHEN suspect THEN 'its percentiles fall as the percentile rises' END
               AS suspect_reason
    FROM (UNPIVOT frontend
          ON output_tokens_per_s_p50, output_tokens_per_s_p75, output_tokens_per_s_p90,
             output_tokens_per_s_p95, output_tokens_per_s_p99, ttft_s_p50, ttft_s_p75,
             ttft_s_p90, ttft_s_p95, ttft_s_p99
          INTO NAME percentile VALUE value)
),
-- The website's chart of each endpoint's throughput, one figure a day per tier: OpenRouter does
-- not say which statistic it is, so it carries none.
daily AS (
    SELECT d.* EXCLUDE (endpoint_id, service_tier), d.endpoint_id AS openrouter_endpoint_id,
           d.service_tier AS openrouter_tier, k.endpoint_id, k.provider_id, k.model_id,
           k.precision, k.service_tier, k.reasoning_effort, k.region, k.endpoint_key, e.tag, e.model_slug,
           g.tier, g.qualifier AS graded_qualifier, g.retrieved_at, g.retrieved_at_bound
    FROM staging.openrouter_frontend_daily AS d
    JOIN core.snapshot_grades AS g USING (snapshot_id)
    JOIN staging.openrouter_frontend_endpoints AS e
      ON e.snapshot_id = d.snapshot_id AND e.permaslug = d.permaslug
     AND e.endpoint_id = d.endpoint_id AND e.variant = 'standard'
    JOIN core.endpoint_keys AS k
      ON k.frame = 'openrouter_frontend_endpoints'
     AND k.model_label = e.permaslug || ':' || e.variant AND k.endpoint_label = d.endpoint_id
     AND k.precision_label = e.precision AND k.tier_label = d.service_tier
    WHERE d.output_tokens_per_s IS NOT NULL
),
daily_figures AS (
    SELECT md5(concat_ws('|', snapshot_id, 'openrouter-daily', permaslug, openrouter_endpoint_id,
                         openrouter_tier, day)) AS observation_id,
           endpoint_id, provider_id, model_id, precision, service_tier, reasoning_effort, region,
           endpoint_key, 'output_tokens_per_s' AS metric, 'live' AS scope,
           'daily throughput chart' AS method, NULL::VARCHAR AS statistic,
           1440::BIGINT AS window_minutes, NULL::VARCHAR AS cited_source_id,
           source_id AS lineage, output_tokens_per_s AS value, NULL::DOUBLE AS low,
           NULL::DOUBLE AS high, graded_qualifier AS qualifier, 'tokens/s' AS unit,
           CAST(left(day, 10) AS DATE)::TIMESTAMPTZ AS observed_at,
           retrieved_at_bound AS observed_at_bound, retrieved_at, snapshot_id, source_id, tier,
           'openrouter_frontend_daily' AS origin, 'measured' AS role,
           tag || ' · ' || model_slug || ' · ' || day || ' · ' || output_tokens_per_s
               || ' tokens/s as charted' AS quote,
           NULL::VARCHAR AS workload, false AS suspect, NULL::VARCHAR AS suspect_reason
    FROM daily
),
-- Vercel AI Gateway's statistics of its own live traffic: p50 and p95 over the last hour.
gateway AS (
    SELECT v.*, k.endpoint_id, k.provider_id, k.model_id, k.precision, k.service_tier,
           k.reasoning_effort, k.region, k.endpoint_key,
           g.tier, g.qualifier AS graded_qualifier, g.retrieved_at, g.retrieved_at_bound,
           coalesce(output_tokens_per_s_p95 < output_tokens_per_s_p50
                    OR ttft_s_p95 < ttft_s_p50, false) AS suspect
    FROM staging.vercel_gateway_endpoints AS v
    JOIN core.snapshot_grades AS g USING (snapshot_id)
    JOIN core.endpoint_keys AS k
      ON k.frame = 'vercel_gateway_endpoints' AND k.model_label = v.model
     AND k.endpoint_label = v.provider_name
),
-- Both routers' rows, made into figures one way. Each keeps its own words: its endpoint's key
-- (OpenRouter's tag, Vercel's provider name), how its quotes name the endpoint, what makes a row
-- suspect.
routers AS (
    SELECT 'openrouter' AS router, 'openrouter_endpoints' AS origin, tag AS endpoint_label,
           provider_name || ' (' || tag || ') · ' || model AS quoted_endpoint,
           'its percentiles fall as the percentile rises' AS suspect_text, *
    FROM routed
    UNION ALL BY NAME
    SELECT 'vercel' AS router, 'vercel_gateway_endpoints' AS origin,
           provider_name AS endpoint_label, provider_name || ' · ' || model AS quoted_endpoint,
           'its p95 is below its p50' AS suspect_text, *
    FROM gateway
),
router_figures AS (
    SELECT md5(concat_ws('|', snapshot_id, router, member_url, endpoint_label, percentile))
               AS observation_id,
           endpoint_id, provider_id, model_id, precision, service_tier, reasoning_effort, region,
           endpoint_key,
           substr(percentile, 1, length(percentile) - 4) AS metric, 'live' AS scope, method,
           right(percentile, 3) AS statistic, window_minutes,
           NULL::VARCHAR AS cited_source_id, source_id AS lineage, value,
           NULL::DOUBLE AS low, NULL::DOUBLE AS high, graded_qualifier AS qualifier,
           CASE WHEN percentile LIKE 'ttft%' THEN 's' ELSE 'tokens/s' END AS unit,
           observed_at, retrieved_at_bound AS observed_at_bound, retrieved_at, snapshot_id,
           source_id, tier, origin, 'measured' AS role,
           quoted_endpoint || ' · ' || right(percentile, 3) || ' '
               || substr(percentile, 1, length(percentile) - 4) || ' ' || round(value, 3)
               AS quote,
           NULL::VARCHAR AS workload, suspect,
           CASE WHEN suspect THEN suspect_text END AS suspect_reason
    FROM (UNPIVOT routers
          ON COLUMNS('^(output_tokens_per_s|ttft_s)_p[0-9]{2}$')
          INTO NAME percentile VALUE value)
)
SELECT * FROM aa_figures
UNION ALL BY NAME SELECT * FROM perf_figures
UNION ALL BY NAME SELECT * FROM router_figures
UNION ALL BY NAME SELECT * FROM frontend_figures
UNION ALL BY NAME SELECT * FROM daily_figures;

-- core.observations: every figure of every snapshot the build reads, one long table: the
-- measured figures kept between builds and the few each build derives (core.cited_observations:
-- compilations' figures and record claims).
CREATE OR REPLACE VIEW core.observations AS
SELECT * FROM core.measured_observations
UNION ALL BY NAME SELECT * FROM core.cited_observations;
