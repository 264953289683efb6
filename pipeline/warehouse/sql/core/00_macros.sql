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
-- deterministic. arg_min over that key is one hash aggregate, not a sort of the whole history.
-- The build keeps the result as core.current_observations, updated from the observations each
-- build adds (pipeline/warehouse/current.py); FROM core.current_of('core.observations')
-- computes it afresh from the whole history.
CREATE OR REPLACE MACRO core.current_of(relation) AS TABLE
WITH candidates AS (
    SELECT o.* FROM query_table(relation) AS o, core.build_state AS b
    WHERE b.as_of IS NULL OR o.retrieved_at <= b.as_of
),
picked AS (
    SELECT arg_min(observation_id, (tier, -epoch(observed_at), source_id, observation_id)) AS id
    FROM candidates
    GROUP BY endpoint_id, metric, scope, method, statistic
)
SELECT c.* FROM candidates AS c SEMI JOIN picked ON c.observation_id = picked.id;
