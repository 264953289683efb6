-- Shared definitions for the core build. An endpoint is provider x model x variant; its id spells
-- all five parts so that it reads in a query result: groq/llama-3.3-70b-instruct/unknown/standard/-
-- A regional endpoint (OpenRouter's amazon-bedrock/eu-west-1) adds @region, so that the ids of
-- every other endpoint stay as they were.
CREATE OR REPLACE MACRO core.endpoint_id(provider_id, model_id, precision, service_tier, effort,
                                         region := NULL) AS
    provider_id || '/' || model_id || '/' || precision || '/' || service_tier || '/'
    || coalesce(effort, '-') || coalesce('@' || region, '');

-- Variant parts can come from the provider label ('Azure (FP8)') or the model label
-- ('gpt-oss-120B (high)'); a stated value wins over the default.
CREATE OR REPLACE MACRO core.pick_precision(a, b) AS CASE WHEN a <> 'unknown' THEN a ELSE b END;
CREATE OR REPLACE MACRO core.pick_service_tier(a, b) AS CASE WHEN a <> 'standard' THEN a ELSE b END;

-- Two endpoints are comparable when provider, model, service tier and region match and the
-- precision and reasoning effort either match or are not stated by one of them (a source that
-- writes "gpt-oss-120B" without an effort may be describing the "(high)" endpoint). Used by the
-- core build (a compilation's figure joins the endpoint of the page it cites) and by the mart
-- (corroboration and disputes).
CREATE OR REPLACE MACRO core.comparable(a_provider, a_model, a_precision, a_tier, a_effort, a_region,
                                        b_provider, b_model, b_precision, b_tier, b_effort, b_region) AS
    a_provider = b_provider AND a_model = b_model AND a_tier = b_tier
    AND a_region IS NOT DISTINCT FROM b_region
    AND (a_precision = b_precision OR a_precision = 'unknown' OR b_precision = 'unknown')
    AND (a_effort IS NOT DISTINCT FROM b_effort OR a_effort IS NULL OR b_effort IS NULL);

-- The current observation of each endpoint, metric, scope, method and statistic among the rows of
-- a relation with core.observations' columns, up to the build's as-of time: the best tier (T1
-- before T2 before T3), then the newest, then by source id and observation id so the choice is
-- deterministic. The build keeps the result as core.current_observations, updated from the
-- observations each build adds (pipeline/warehouse/current.py); FROM
-- core.current_of('core.observations') computes it afresh from the whole history.
-- Over the history, only cheap columns are read in full: per key, the best tier and its newest
-- time are plain min/max aggregates (an arg_min over a struct key, or one carrying the row or its
-- 32-character id, costs several times as much). Whole rows are then read for those instants
-- only: the IN filter on observed_at reaches the scan, so the other columns are decoded for the
-- rows at those instants, not for the history. Ties on tier and time are few and are broken last.
CREATE OR REPLACE MACRO core.current_of(relation) AS TABLE
WITH candidates AS NOT MATERIALIZED (  -- the whole history: never copy it
    SELECT o.* FROM query_table(relation) AS o, core.build_state AS b
    WHERE b.as_of IS NULL OR o.retrieved_at <= b.as_of
),
newest_per_tier AS (
    SELECT endpoint_id, metric, scope, method, statistic, tier, max(observed_at) AS observed_at
    FROM candidates
    GROUP BY endpoint_id, metric, scope, method, statistic, tier
),
best AS (  -- one row per key: its best tier, and the newest time in that tier
    SELECT endpoint_id, metric, scope, method, statistic, min(tier) AS tier,
           arg_min(observed_at, tier) AS observed_at
    FROM newest_per_tier
    GROUP BY endpoint_id, metric, scope, method, statistic
)
SELECT c.* FROM candidates AS c
SEMI JOIN best AS b
  ON c.endpoint_id = b.endpoint_id AND c.metric = b.metric AND c.scope = b.scope
 AND c.method = b.method AND c.statistic IS NOT DISTINCT FROM b.statistic
 AND c.tier = b.tier AND c.observed_at = b.observed_at
WHERE c.observed_at IN (SELECT observed_at FROM best)
QUALIFY row_number() OVER (
    PARTITION BY c.endpoint_id, c.metric, c.scope, c.method, c.statistic
    ORDER BY c.source_id, c.observation_id
) = 1;
