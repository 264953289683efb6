-- Every endpoint a figure or an offer names, and how each source's own key for it maps to it.
-- A fact keeps the source's key (a label, a slug, a tag) in its staged row; core.endpoint_keys
-- maps each key to its endpoint, so that a new identity rule or alias re-maps the keys and never
-- rewrites the facts.
--   frame           the staged frame the key comes from
--   model_label     the model as that frame writes it
--   endpoint_label  the endpoint as that frame writes it (a provider label, an OpenRouter tag)
--   precision_label the precision the frame states for the row ('unknown' when it states none)
--   tier_label      the service tier the frame states for the row (null when it states none)
-- A name from prose that nothing resolves maps to no endpoint: its figures are held back (the
-- build reports them).
INSERT INTO core.endpoint_keys BY NAME
WITH providers AS (FROM core.named('provider')),
models AS (FROM core.named('model')),
aa AS (
    SELECT DISTINCT 'aa_endpoints' AS frame, page_model AS model_label,
           endpoint_label, 'unknown' AS precision_label
    FROM staging.aa_endpoints SEMI JOIN core.build_scope USING (snapshot_id)
),
perf AS (
    SELECT DISTINCT 'llmperf_runs' AS frame, model_label, framework AS endpoint_label,
           'unknown' AS precision_label
    FROM staging.llmperf_runs SEMI JOIN core.build_scope USING (snapshot_id)
),
named AS (
    SELECT k.*, p.entity_id AS provider_id, m.entity_id AS model_id,
           core.pick_precision(p.precision, m.precision) AS precision,
           core.pick_service_tier(p.service_tier, m.service_tier) AS service_tier,
           coalesce(p.reasoning_effort, m.reasoning_effort) AS reasoning_effort,
           NULL::VARCHAR AS region, NULL::VARCHAR AS endpoint_key
    FROM (SELECT * FROM aa UNION ALL SELECT * FROM perf) AS k
    JOIN providers AS p ON p.label = k.endpoint_label
    JOIN models AS m ON m.label = k.model_label
),
-- OpenRouter's endpoints: the provider from the tag's root, the model from the response's id,
-- precision from the quantization (else the tag), service tier and region from the tag. The
-- endpoint's key is what else tells it apart among the model's endpoints: the tag's other words
-- ('fp8' in novita/fp8: the tag `novita` is another endpoint, whatever its quantization) and the
-- slug's variant (':free', ':batch').
routed AS (
    SELECT DISTINCT 'openrouter_endpoints' AS frame, model AS model_label, tag AS endpoint_label,
           precision AS precision_label, tag_root, tag_suffix
    FROM staging.openrouter_endpoints SEMI JOIN core.build_scope USING (snapshot_id)
),
routed_keys AS (
    SELECT r.frame, r.model_label, r.endpoint_label, r.precision_label,
           p.entity_id AS provider_id, m.entity_id AS model_id,
           core.pick_precision(r.precision_label, coalesce(t.precision, 'unknown')) AS precision,
           core.pick_service_tier(coalesce(t.service_tier, 'standard'), m.service_tier)
               AS service_tier,
           coalesce(t.reasoning_effort, m.reasoning_effort) AS reasoning_effort,
           core.id_part(t.entity_id) AS region,
           core.id_part(concat_ws('.',
               nullif(split_part(r.model_label, ':', 2), ''),
               array_to_string(list_filter(
                   string_split(coalesce(r.tag_suffix, ''), '/'),
                   lambda w: w <> '' AND NOT list_contains(
                       string_split(coalesce(t.entity_id, ''), '/'), w)), '.'))) AS endpoint_key
    FROM routed AS r
    JOIN core.identified('provider') AS p ON p.label = r.tag_root
    JOIN core.identified('model') AS m ON m.label = r.model_label
    LEFT JOIN core.labels AS t ON t.kind = 'endpoint_tag' AND t.label = r.tag_suffix
),
-- OpenRouter's website statistics: the same tags, but an endpoint is named by its own id (a UUID),
-- and statistics come per service tier (statsByTier: default, flex, priority). Two endpoints of
-- one model can share a tag (two `together` endpoints): those carry the start of their own id in
-- their key, so they never share one.
frontend AS (
    SELECT DISTINCT e.permaslug || ':' || e.variant AS model_label, e.endpoint_id AS endpoint_label,
           e.precision AS precision_label, s.service_tier AS tier_label, e.model_slug, e.variant,
           e.tag, e.tag_root, e.tag_suffix, e.provider_region
    FROM staging.openrouter_frontend_endpoints AS e
    SEMI JOIN core.build_scope USING (snapshot_id)
    JOIN staging.openrouter_frontend_stats AS s
      USING (snapshot_id, permaslug, variant, endpoint_id)
    WHERE s.service_tier IS NOT NULL  -- the untiered `stats` block: see the README, left out
),
shared_tags AS (
    SELECT model_label, tag, precision_label FROM frontend
    GROUP BY ALL HAVING count(DISTINCT endpoint_label) > 1
),
frontend_keys AS (
    SELECT 'openrouter_frontend_endpoints' AS frame, f.model_label, f.endpoint_label,
           f.precision_label, f.tier_label, p.entity_id AS provider_id, m.entity_id AS model_id,
           core.pick_precision(f.precision_label, coalesce(t.precision, 'unknown')) AS precision,
           CASE f.tier_label WHEN 'default' THEN coalesce(t.service_tier, 'standard')
                             ELSE f.tier_label END AS service_tier,
           coalesce(t.reasoning_effort, m.reasoning_effort) AS reasoning_effort,
           core.id_part(coalesce(t.entity_id, f.provider_region)) AS region,
           core.id_part(concat_ws('.',
               CASE WHEN f.variant <> 'standard' THEN f.variant END,
               array_to_string(list_filter(
                   string_split(coalesce(f.tag_suffix, ''), '/'),
                   lambda w: w <> '' AND NOT list_contains(
                       string_split(coalesce(t.entity_id, ''), '/'), w)), '.'),
               CASE WHEN x.tag IS NOT NULL THEN 'e' || left(f.endpoint_label, 8) END))
               AS endpoint_key
    FROM frontend AS f
    JOIN core.identified('provider') AS p ON p.label = f.tag_root
    JOIN core.identified('model') AS m ON m.label = f.model_slug
    LEFT JOIN core.labels AS t ON t.kind = 'endpoint_tag' AND t.label = f.tag_suffix
    LEFT JOIN shared_tags AS x USING (model_label, tag, precision_label)
),
-- Vercel's gateway: an endpoint is a provider of a model, named as Vercel names the provider.
gateway AS (
    SELECT DISTINCT 'vercel_gateway_endpoints' AS frame, model AS model_label,
           provider_name AS endpoint_label, 'unknown' AS precision_label
    FROM staging.vercel_gateway_endpoints SEMI JOIN core.build_scope USING (snapshot_id)
),
gateway_keys AS (
    SELECT g.*, p.entity_id AS provider_id, m.entity_id AS model_id,
           core.pick_precision(p.precision, m.precision) AS precision,
           core.pick_service_tier(p.service_tier, m.service_tier) AS service_tier,
           coalesce(p.reasoning_effort, m.reasoning_effort) AS reasoning_effort,
           NULL::VARCHAR AS region, NULL::VARCHAR AS endpoint_key
    FROM gateway AS g
    JOIN core.identified('provider') AS p ON p.label = g.endpoint_label
    JOIN core.identified('model') AS m ON m.label = g.model_label
)
SELECT frame, model_label, endpoint_label, precision_label, tier_label,
       core.endpoint_id(provider_id, model_id, precision, service_tier, reasoning_effort, region,
                        endpoint_key) AS endpoint_id,
       provider_id, model_id, precision, service_tier, reasoning_effort, region, endpoint_key
FROM (
    SELECT * FROM named
    UNION ALL BY NAME SELECT * FROM routed_keys
    UNION ALL BY NAME SELECT * FROM frontend_keys
    UNION ALL BY NAME SELECT * FROM gateway_keys
);
