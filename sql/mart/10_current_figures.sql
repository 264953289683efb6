-- For each endpoint, metric and scope: the current figure, chosen by tier (T1 before T2 before
-- T3), then by date (newest first), then by source id so the choice is deterministic.
-- Live medians, per-user records and aggregate figures have different scopes and are never
-- compared or ranked together.

-- Two endpoints are comparable when provider, model and service tier match and the precision
-- and reasoning effort either match or are not stated by one of them (a source that writes
-- "gpt-oss-120B" without an effort may be describing the "(high)" endpoint).
CREATE OR REPLACE MACRO mart.comparable(a_provider, a_model, a_precision, a_tier, a_effort,
                                        b_provider, b_model, b_precision, b_tier, b_effort) AS
    a_provider = b_provider AND a_model = b_model AND a_tier = b_tier
    AND (a_precision = b_precision OR a_precision = 'unknown' OR b_precision = 'unknown')
    AND (a_effort IS NOT DISTINCT FROM b_effort OR a_effort IS NULL OR b_effort IS NULL);

-- A disagreement: comparable endpoints, same metric and scope, different sources, observed
-- within 7 days of each other, and the larger figure more than 10% above the smaller.
-- Only point figures (exact or approximate) are compared; ranges and bounds are not.
CREATE OR REPLACE VIEW mart.observation_pairs AS
SELECT a.observation_id AS a_id, b.observation_id AS b_id,
       a.endpoint_id AS a_endpoint_id, b.endpoint_id AS b_endpoint_id,
       a.metric, a.scope, a.source_id AS a_source_id, b.source_id AS b_source_id,
       a.tier AS a_tier, b.tier AS b_tier, a.value AS a_value, b.value AS b_value,
       a.observed_at AS a_observed_at, b.observed_at AS b_observed_at,
       greatest(a.value, b.value) > 1.10 * least(a.value, b.value) AS disagree
FROM mart.observations_as_of AS a
JOIN mart.observations_as_of AS b
  ON a.metric = b.metric AND a.scope = b.scope AND a.source_id <> b.source_id
 AND mart.comparable(a.provider_id, a.model_id, a.precision, a.service_tier, a.reasoning_effort,
                     b.provider_id, b.model_id, b.precision, b.service_tier, b.reasoning_effort)
 AND abs(epoch(a.observed_at) - epoch(b.observed_at)) <= 7 * 86400
WHERE a.value IS NOT NULL AND b.value IS NOT NULL
  AND coalesce(a.qualifier, 'approx') = 'approx' AND coalesce(b.qualifier, 'approx') = 'approx';

CREATE OR REPLACE VIEW mart.current_figures AS
WITH ranked AS (
    SELECT o.*,
           row_number() OVER (
               PARTITION BY endpoint_id, metric, scope
               ORDER BY tier, observed_at DESC, source_id, observation_id
           ) AS pick
    FROM mart.observations_as_of AS o
),
chosen AS (
    SELECT * EXCLUDE (pick) FROM ranked WHERE pick = 1
),
support AS (
    SELECT p.a_id,
           count(DISTINCT p.b_source_id) FILTER (WHERE NOT p.disagree) AS corroborating_sources,
           list(DISTINCT p.b_source_id ORDER BY p.b_source_id) FILTER (WHERE NOT p.disagree)
               AS corroborated_by,
           list(DISTINCT p.b_source_id ORDER BY p.b_source_id) FILTER (WHERE p.disagree)
               AS disputed_by
    FROM mart.observation_pairs AS p
    GROUP BY p.a_id
)
SELECT c.*, coalesce(s.corroborating_sources, 0) AS corroborating_sources,
       coalesce(s.corroborated_by, []) AS corroborated_by,
       coalesce(s.disputed_by, []) AS disputed_by,
       snap.url AS source_url
FROM chosen AS c
LEFT JOIN support AS s ON s.a_id = c.observation_id
JOIN core.snapshots AS snap USING (snapshot_id);

COMMENT ON VIEW mart.current_figures IS
    'The current figure per endpoint, metric and scope (tier first, then date), with the sources that corroborate or dispute it.';
