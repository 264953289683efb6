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
CREATE OR REPLACE MACRO mart.point_figure(value, qualifier) AS
    value IS NOT NULL AND coalesce(qualifier, 'approx') = 'approx';
CREATE OR REPLACE MACRO mart.within_a_week(a_at, b_at) AS
    abs(epoch(a_at) - epoch(b_at)) <= 7 * 86400;
CREATE OR REPLACE MACRO mart.disagree(a_value, b_value) AS
    greatest(a_value, b_value) > 1.10 * least(a_value, b_value);
CREATE OR REPLACE VIEW mart.observation_pairs AS
WITH comparable_points AS NOT MATERIALIZED (  -- the whole history: never copy it
    SELECT o.*, CAST(floor(epoch(o.observed_at) / (7 * 86400)) AS BIGINT) AS week
    FROM core.observations AS o, core.build_state AS b
    WHERE (b.as_of IS NULL OR o.retrieved_at <= b.as_of) AND mart.point_figure(o.value, o.qualifier)
),
-- Only figures that another source also reports can pair: a benchmark's daily history of one
-- endpoint compared with itself is never looked at (that would be quadratic in history).
shared AS (
    SELECT provider_id, model_id, service_tier, metric, scope
    FROM comparable_points
    GROUP BY ALL
    HAVING min(source_id) <> max(source_id)  -- two sources at least, without a distinct count
),
candidates AS MATERIALIZED (  -- used twice below: compute it once
    SELECT p.* FROM comparable_points AS p
    SEMI JOIN shared USING (provider_id, model_id, service_tier, metric, scope)
),
-- 7 days apart at most means the same or a neighbouring 7-day bucket: an equi-join on buckets.
neighbours AS (
    SELECT *, week + shift AS join_week FROM candidates, (VALUES (-1), (0), (1)) AS s (shift)
)
SELECT a.observation_id AS a_id, b.observation_id AS b_id,
       a.endpoint_id AS a_endpoint_id, b.endpoint_id AS b_endpoint_id,
       a.provider_id, a.model_id, a.service_tier, a.precision AS a_precision,
       b.precision AS b_precision, a.reasoning_effort AS a_reasoning_effort,
       b.reasoning_effort AS b_reasoning_effort, a.unit, a.quote AS a_quote, b.quote AS b_quote,
       a.metric, a.scope, a.source_id AS a_source_id, b.source_id AS b_source_id,
       a.tier AS a_tier, b.tier AS b_tier, a.value AS a_value, b.value AS b_value,
       a.observed_at AS a_observed_at, b.observed_at AS b_observed_at,
       mart.disagree(a.value, b.value) AS disagree
FROM candidates AS a
JOIN neighbours AS b
  ON a.provider_id = b.provider_id AND a.model_id = b.model_id
 AND a.service_tier = b.service_tier AND a.metric = b.metric AND a.scope = b.scope
 AND a.week = b.join_week
 AND a.source_id <> b.source_id
 AND mart.comparable(a.provider_id, a.model_id, a.precision, a.service_tier, a.reasoning_effort,
                     b.provider_id, b.model_id, b.precision, b.service_tier, b.reasoning_effort)
 AND mart.within_a_week(a.observed_at, b.observed_at);

-- Computing the current figures reads the whole history, so a build does it once and keeps the
-- result as a table (below); `FROM mart.current_figures_at()` computes them afresh.
CREATE OR REPLACE MACRO mart.current_figures_at() AS TABLE
WITH picked AS (
    -- arg_min over (tier, newest first, source, id): one hash aggregate instead of a sort of
    -- the whole history; the same choice as ORDER BY tier, observed_at DESC, source_id, id
    SELECT arg_min(o.observation_id, (o.tier, -epoch(o.observed_at), o.source_id, o.observation_id))
               AS id
    FROM core.observations AS o, core.build_state AS b
    WHERE b.as_of IS NULL OR o.retrieved_at <= b.as_of
    GROUP BY o.endpoint_id, o.metric, o.scope
),
-- freshness for the chosen rows only, by the same rule as mart.observations_as_of
chosen AS (
    SELECT o.*,
           mart.fresh_as_of(o.observed_at, o.retrieved_at, f.latest_retrieved_at, f.confirmed_at)
               AS fresh_as_of,
           mart.is_stale(o.scope, fresh_as_of, f.data_date, f.max_age_minutes) AS stale
    FROM core.observations AS o
    SEMI JOIN picked ON o.observation_id = picked.id
    JOIN mart.source_freshness AS f USING (source_id)
),
-- The pairs of the chosen figures only: a small build side probed by the history once,
-- under the same rule as mart.observation_pairs.
pairs AS (
    SELECT c.observation_id AS a_id, b.source_id AS b_source_id,
           mart.disagree(c.value, b.value) AS disagree
    FROM chosen AS c
    JOIN (
        SELECT o.* FROM core.observations AS o, core.build_state AS state
        WHERE state.as_of IS NULL OR o.retrieved_at <= state.as_of
    ) AS b
      ON b.provider_id = c.provider_id AND b.model_id = c.model_id
     AND b.service_tier = c.service_tier AND b.metric = c.metric AND b.scope = c.scope
     AND b.source_id <> c.source_id
     AND mart.comparable(c.provider_id, c.model_id, c.precision, c.service_tier,
                         c.reasoning_effort, b.provider_id, b.model_id, b.precision,
                         b.service_tier, b.reasoning_effort)
     AND mart.within_a_week(c.observed_at, b.observed_at)
    WHERE mart.point_figure(c.value, c.qualifier) AND mart.point_figure(b.value, b.qualifier)
),
support AS (
    SELECT a_id,
           count(DISTINCT b_source_id) FILTER (WHERE NOT disagree) AS corroborating_sources,
           list(DISTINCT b_source_id ORDER BY b_source_id) FILTER (WHERE NOT disagree)
               AS corroborated_by,
           list(DISTINCT b_source_id ORDER BY b_source_id) FILTER (WHERE disagree) AS disputed_by
    FROM pairs
    GROUP BY a_id
)
SELECT c.*, coalesce(s.corroborating_sources, 0) AS corroborating_sources,
       coalesce(s.corroborated_by, []) AS corroborated_by,
       coalesce(s.disputed_by, []) AS disputed_by,
       snap.url AS source_url
FROM chosen AS c
LEFT JOIN support AS s ON s.a_id = c.observation_id
JOIN core.snapshots AS snap USING (snapshot_id);

CREATE OR REPLACE TABLE mart.current_figures AS
SELECT * FROM mart.current_figures_at() ORDER BY endpoint_id, metric, scope;

COMMENT ON TABLE mart.current_figures IS
    'The current figure per endpoint, metric and scope (tier first, then date), with the sources that corroborate or dispute it; computed by each build from the whole history (mart.current_figures_at()).';
