-- Shared definitions, created with the core tables and used by the core build and the mart.

-- An endpoint is provider x model x variant, and the source's own endpoint key where the variant
-- does not tell its endpoints apart (OpenRouter's tag `novita/fp8` beside `novita`, a model's
-- `:free` slug). Its id spells every part so that it reads in a query result:
--     provider/model/precision/service_tier/reasoning_effort[@region][~key]
--     groq/llama-3.3-70b-instruct/unknown/standard/-
--     amazon-bedrock/llama-4-maverick/unknown/standard/-@eu-west-1
--     novita/llama-3.3-70b-instruct/fp8/standard/-~fp8
-- Every part is a slug (core.id_part), so any key a source can send gives an id the export
-- schema accepts.
CREATE OR REPLACE MACRO core.endpoint_id(provider_id, model_id, precision_, service_tier, effort,
                                         region, endpoint_key) AS
    provider_id || '/' || model_id || '/' || precision_ || '/' || service_tier || '/'
    || coalesce(effort, '-') || coalesce('@' || region, '') || coalesce('~' || endpoint_key, '');

-- A region or key as a part of an id: lower case, every run of characters other than a-z, 0-9
-- and '.' as one '-', no separator at either end; null when nothing is left.
CREATE OR REPLACE MACRO core.id_part(text) AS
    nullif(regexp_replace(regexp_replace(regexp_replace(lower(text), '[^a-z0-9.]+', '-', 'g'),
                                         '[-.]*-[-.]*', '-', 'g'),
                          '^[-.]+|[-.]+$', '', 'g'), '');

-- Variant parts can come from the provider label ('Azure (FP8)') or the model label
-- ('gpt-oss-120B (high)'); a stated value wins over the default.
CREATE OR REPLACE MACRO core.pick_precision(a, b) AS CASE WHEN a <> 'unknown' THEN a ELSE b END;
CREATE OR REPLACE MACRO core.pick_service_tier(a, b) AS CASE WHEN a <> 'standard' THEN a ELSE b END;

-- Two endpoints are comparable when provider, model, service tier and region match and the
-- precision and reasoning effort either match or are not stated by one of them (a source that
-- writes "gpt-oss-120B" without an effort may be describing the "(high)" endpoint). Endpoint keys
-- are one source's names for its own endpoints, so they never enter comparisons across sources.
CREATE OR REPLACE MACRO core.comparable(a_provider, a_model, a_precision, a_tier, a_effort, a_region,
                                        b_provider, b_model, b_precision, b_tier, b_effort, b_region) AS
    a_provider = b_provider AND a_model = b_model AND a_tier = b_tier
    AND a_region IS NOT DISTINCT FROM b_region
    AND (a_precision = b_precision OR a_precision = 'unknown' OR b_precision = 'unknown')
    AND (a_effort IS NOT DISTINCT FROM b_effort OR a_effort IS NULL OR b_effort IS NULL);


-- The current figure of each endpoint, metric, scope, method and statistic among the figures of
-- `relations` (a list of tables, unioned by name): the best tier (T1 before T2 before T3), then
-- the newest, then by source and observation id, so that the choice is deterministic. One pass:
-- the row with the least key per group (the newest as the negated time). A least element of a
-- total order, so the current figure of a union is the current figure of its parts' current
-- figures: the measured figures' are kept between builds (core.current_measured,
-- pipeline/warehouse/measured.py) and the mart takes them with the few each build derives.
-- The groups keep the chosen figure's id (observation ids are unique), not the whole row: a
-- row per group of every figure outgrew the build's memory budget at 30 days of polls.
CREATE OR REPLACE MACRO core.current_of(relations) AS TABLE
SELECT f.* FROM query_table(relations, true) AS f
SEMI JOIN (
    SELECT arg_min(o.observation_id,
                   (o.tier, -epoch_us(o.observed_at), o.source_id, o.observation_id))
               AS observation_id
    FROM query_table(relations, true) AS o
    GROUP BY o.endpoint_id, o.metric, o.scope, o.method, o.statistic
) AS chosen USING (observation_id);
