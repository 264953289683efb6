-- For each endpoint, metric, scope, method and statistic: the current figure, chosen by tier (T1
-- before T2 before T3), then by date (newest first), then by source id so the choice is
-- deterministic. Each method keeps its own current figure: a 72-hour probe median and a
-- 30-minute p50 of routed traffic are different measurements of the same endpoint.
-- Live medians, per-user records and aggregate figures have different scopes and are never
-- compared or ranked together.

-- Comparable endpoints: core.comparable (provider, model, service tier and region match; precision
-- and reasoning effort match or are unstated on one side).

-- Two figures say the same thing only when they are the same measurement: the same method (a
-- 72-hour probe median, a 30-minute percentile of routed traffic, a one-off run, a record) and
-- the same statistic. Figures of different methods are never ranked, corroborated or disputed
-- against each other; far apart, they are listed as such (mart.method_gaps).
CREATE OR REPLACE MACRO mart.same_measurement(a_method, a_statistic, b_method, b_statistic) AS
    a_method = b_method AND a_statistic IS NOT DISTINCT FROM b_statistic;
-- Two figures are independent when neither source repeats the other: different publishers,
-- different lineage (a claim repeated by the press is one claim; a compilation's figure repeats
-- the page it cites), neither cites the other, neither cites a page of the other's publisher
-- (a compilation citing an Artificial Analysis page repeats Artificial Analysis), and neither
-- snapshot was reconstructed from the other's source, nor both from the same document.
CREATE OR REPLACE MACRO mart.independent(a_source, a_publisher, a_lineage, a_cited, a_cited_by,
                                         a_rebuilt_from, b_source, b_publisher, b_lineage,
                                         b_cited, b_cited_by, b_rebuilt_from) AS
    a_publisher <> b_publisher AND a_lineage <> b_lineage
    AND a_source IS DISTINCT FROM b_cited AND b_source IS DISTINCT FROM a_cited
    AND a_publisher IS DISTINCT FROM b_cited_by AND b_publisher IS DISTINCT FROM a_cited_by
    AND a_source IS DISTINCT FROM b_rebuilt_from AND b_source IS DISTINCT FROM a_rebuilt_from
    AND (a_rebuilt_from IS NULL OR a_rebuilt_from IS DISTINCT FROM b_rebuilt_from);
-- Observations with their source's publisher, the publisher of the page they cite, and the
-- source a reconstructed snapshot was rebuilt from: mart.published_of adds these to any relation
-- with core.observations' columns (the current figures use it on the chosen rows alone).
CREATE OR REPLACE MACRO mart.published_of(relation) AS TABLE
SELECT o.*, src.publisher, cited.publisher AS cited_publisher,
       nullif(split_part(snap.reconstructed_from_snapshot_id, '/', 1), '') AS rebuilt_from
FROM query_table(relation) AS o
JOIN core.sources AS src USING (source_id)
JOIN core.snapshots AS snap USING (snapshot_id)
LEFT JOIN core.sources AS cited ON cited.source_id = o.cited_source_id;
CREATE OR REPLACE VIEW mart.published_observations AS FROM mart.published_of('core.observations');

COMMENT ON VIEW mart.published_observations IS
    'Every observation with its source''s publisher and the publisher of the page it cites: what the independence rule compares.';
COMMENT ON COLUMN mart.published_observations.publisher IS 'who publishes the figure''s source';
COMMENT ON COLUMN mart.published_observations.cited_publisher IS 'who publishes the page the figure cites; null when it cites none';
COMMENT ON COLUMN mart.published_observations.rebuilt_from IS 'the source whose snapshot the figure''s snapshot was reconstructed from; null for a snapshot as obtained';
-- Only point figures (exact or approximate) are compared; ranges and bounds are not. Two figures
-- agree when observed within 7 days and the larger is at most 10% above the smaller.
CREATE OR REPLACE MACRO mart.point_figure(value, qualifier) AS
    value IS NOT NULL AND coalesce(qualifier, 'approx') = 'approx';
CREATE OR REPLACE MACRO mart.within_a_week(a_at, b_at) AS
    abs(epoch(a_at) - epoch(b_at)) <= 7 * 86400;
CREATE OR REPLACE MACRO mart.disagree(a_value, b_value) AS
    greatest(a_value, b_value) > 1.10 * least(a_value, b_value);
CREATE OR REPLACE VIEW mart.observation_pairs AS
WITH comparable_points AS NOT MATERIALIZED (  -- the whole history: never copy it
    SELECT o.*, CAST(floor(epoch(o.observed_at) / (7 * 86400)) AS BIGINT) AS week
    FROM mart.published_observations AS o, core.build_state AS b
    WHERE (b.as_of IS NULL OR o.retrieved_at <= b.as_of) AND mart.point_figure(o.value, o.qualifier)
),
-- Only figures that another source also reports can pair: a benchmark's daily history of one
-- endpoint compared with itself is never looked at (that would be quadratic in history). The
-- build keeps which sources report what (core.measurement_sources), so this reads no history.
shared AS (
    SELECT provider_id, model_id, service_tier, metric, scope
    FROM core.measurement_sources
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
       a.provider_id, a.model_id, a.service_tier, a.region, a.precision AS a_precision,
       b.precision AS b_precision, a.reasoning_effort AS a_reasoning_effort,
       b.reasoning_effort AS b_reasoning_effort, a.unit, a.quote AS a_quote, b.quote AS b_quote,
       a.metric, a.scope, a.source_id AS a_source_id, b.source_id AS b_source_id,
       a.tier AS a_tier, b.tier AS b_tier, a.value AS a_value, b.value AS b_value,
       a.method AS a_method, b.method AS b_method,
       a.statistic AS a_statistic, b.statistic AS b_statistic,
       a.observed_at AS a_observed_at, b.observed_at AS b_observed_at,
       mart.same_measurement(a.method, a.statistic, b.method, b.statistic) AS same_measurement,
       mart.independent(a.source_id, a.publisher, a.lineage, a.cited_source_id,
                        a.cited_publisher, a.rebuilt_from, b.source_id, b.publisher,
                        b.lineage, b.cited_source_id, b.cited_publisher, b.rebuilt_from)
           AS independent,
       mart.disagree(a.value, b.value) AS disagree
FROM candidates AS a
JOIN neighbours AS b
  ON a.provider_id = b.provider_id AND a.model_id = b.model_id
 AND a.service_tier = b.service_tier AND a.metric = b.metric AND a.scope = b.scope
 AND a.week = b.join_week
 AND a.source_id <> b.source_id
 AND core.comparable(a.provider_id, a.model_id, a.precision, a.service_tier, a.reasoning_effort,
                     a.region, b.provider_id, b.model_id, b.precision, b.service_tier,
                     b.reasoning_effort, b.region)
 AND mart.within_a_week(a.observed_at, b.observed_at);

-- The current figures with their freshness and support, from a relation holding the current
-- observations: the build's core.current_observations (kept up to date from what each build adds),
-- or mart.current_observations_afresh, computed from the whole history.
CREATE OR REPLACE VIEW mart.current_observations_afresh AS FROM core.current_of('core.observations');
COMMENT ON VIEW mart.current_observations_afresh IS
    'The current observation per endpoint, metric, scope, method and statistic, computed afresh from the whole history (core.current_of); the build keeps the same as core.current_observations.';

CREATE OR REPLACE MACRO mart.current_figures_of(current) AS TABLE
WITH
-- freshness for the chosen rows only, by the same rule as mart.observations_as_of
chosen AS (
    SELECT o.*,
           mart.fresh_as_of(o.observed_at, o.retrieved_at, f.latest_retrieved_at, f.confirmed_at)
               AS fresh_as_of,
           mart.is_stale(o.scope, fresh_as_of, f.data_date, f.max_age_minutes) AS stale
    FROM mart.published_of(current) AS o
    JOIN mart.source_freshness AS f USING (source_id)
),
compared AS (SELECT * FROM chosen WHERE mart.point_figure(value, qualifier)),
-- A chosen figure pairs only with another source's figure of the same measurement: those whose
-- measurement no other source reports (core.measurement_sources, kept by each build) are not
-- looked up in the history at all.
pairing AS (
    SELECT c.* FROM compared AS c
    SEMI JOIN core.measurement_sources AS m
      ON m.provider_id = c.provider_id AND m.model_id = c.model_id
     AND m.service_tier = c.service_tier AND m.region IS NOT DISTINCT FROM c.region
     AND m.metric = c.metric AND m.scope = c.scope AND m.method = c.method
     AND m.statistic IS NOT DISTINCT FROM c.statistic AND m.source_id <> c.source_id
),
-- A figure pairs only with figures observed within a week of it, so the history is read at the
-- instants near a chosen figure's only: the distinct instants of the history (one cheap column)
-- whose nearest chosen instant, before or after, is within a week. The IN filter on observed_at
-- reaches the scan, so the history's other columns are decoded for those rows alone.
instants AS (
    SELECT DISTINCT o.observed_at FROM core.observations AS o, core.build_state AS state
    WHERE state.as_of IS NULL OR o.retrieved_at <= state.as_of
),
chosen_instants AS (SELECT DISTINCT observed_at FROM pairing),
near AS (
    SELECT i.observed_at FROM instants AS i
    ASOF LEFT JOIN chosen_instants AS before ON before.observed_at <= i.observed_at
    ASOF LEFT JOIN chosen_instants AS after ON after.observed_at >= i.observed_at
    WHERE mart.within_a_week(i.observed_at, before.observed_at)
       OR mart.within_a_week(i.observed_at, after.observed_at)
),
-- A history row pairs only with a chosen figure of its measurement from another source: the
-- sources of each measurement's chosen figures, as a first and a last (a row can pair unless both
-- are its own). Joined on the measurement, each history row meets one row here.
pairing_measurements AS (
    SELECT provider_id, model_id, service_tier, region, metric, scope, method, statistic,
           min(source_id) AS first_source, max(source_id) AS last_source
    FROM pairing
    GROUP BY ALL
),
pairable AS (
    SELECT o.* FROM core.observations AS o
    JOIN pairing_measurements AS m
      ON m.provider_id = o.provider_id AND m.model_id = o.model_id
     AND m.service_tier = o.service_tier AND m.region IS NOT DISTINCT FROM o.region
     AND m.metric = o.metric AND m.scope = o.scope AND m.method = o.method
     AND m.statistic IS NOT DISTINCT FROM o.statistic,
         core.build_state AS state
    WHERE (state.as_of IS NULL OR o.retrieved_at <= state.as_of)
      AND o.observed_at IN (SELECT observed_at FROM near)
      AND (o.source_id <> m.first_source OR o.source_id <> m.last_source)
      AND mart.point_figure(o.value, o.qualifier)
),
-- The pairs of the chosen figures only, under the same rule as mart.observation_pairs.
pairs AS (
    SELECT c.observation_id AS a_id, b.source_id AS b_source_id,
           mart.disagree(c.value, b.value) AS disagree
    FROM pairing AS c
    JOIN mart.published_of('pairable') AS b
      ON b.provider_id = c.provider_id AND b.model_id = c.model_id
     AND b.service_tier = c.service_tier AND b.metric = c.metric AND b.scope = c.scope
     AND b.source_id <> c.source_id
     AND mart.same_measurement(c.method, c.statistic, b.method, b.statistic)
     AND mart.independent(c.source_id, c.publisher, c.lineage, c.cited_source_id,
                          c.cited_publisher, c.rebuilt_from, b.source_id, b.publisher,
                          b.lineage, b.cited_source_id, b.cited_publisher, b.rebuilt_from)
     AND core.comparable(c.provider_id, c.model_id, c.precision, c.service_tier,
                         c.reasoning_effort, c.region, b.provider_id, b.model_id, b.precision,
                         b.service_tier, b.reasoning_effort, b.region)
     AND mart.within_a_week(c.observed_at, b.observed_at)
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
SELECT c.* EXCLUDE (publisher, cited_publisher, rebuilt_from),
       coalesce(s.corroborating_sources, 0) AS corroborating_sources,
       coalesce(s.corroborated_by, []) AS corroborated_by,
       coalesce(s.disputed_by, []) AS disputed_by,
       snap.url AS source_url
FROM chosen AS c
LEFT JOIN support AS s ON s.a_id = c.observation_id
JOIN core.snapshots AS snap USING (snapshot_id);

-- `FROM mart.current_figures_at()` computes them afresh from the whole history.
CREATE OR REPLACE MACRO mart.current_figures_at() AS TABLE
FROM mart.current_figures_of('mart.current_observations_afresh');
