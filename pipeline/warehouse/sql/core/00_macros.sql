-- Shared definitions for the core build. An endpoint is provider x model x variant; its id spells
-- all five parts so that it reads in a query result: groq/llama-3.3-70b-instruct/unknown/standard/-
CREATE OR REPLACE MACRO core.endpoint_id(provider_id, model_id, precision, service_tier, effort) AS
    provider_id || '/' || model_id || '/' || precision || '/' || service_tier || '/'
    || coalesce(effort, '-');

-- Variant parts can come from the provider label ('Azure (FP8)') or the model label
-- ('gpt-oss-120B (high)'); a stated value wins over the default.
CREATE OR REPLACE MACRO core.pick_precision(a, b) AS CASE WHEN a <> 'unknown' THEN a ELSE b END;
CREATE OR REPLACE MACRO core.pick_service_tier(a, b) AS CASE WHEN a <> 'standard' THEN a ELSE b END;
