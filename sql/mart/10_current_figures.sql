-- The current figure per endpoint, metric, scope, method and statistic (core.current_of: the best
-- tier, then the newest). Each method keeps its own current figure: a 72-hour probe median and a
-- 30-minute p50 of routed traffic are different measurements of the same endpoint. A figure
-- whose value is not known (a range, a bound) is current like any other; the rankings read only
-- point figures. Kept as a table by each build: the exports and the views below read it often.
-- Taken from the measured figures' current ones (kept between builds) and the derived figures:
-- the same as from every observation, without a pass over the history.
CREATE OR REPLACE TABLE mart.current_observations AS
FROM core.current_of(['core.current_measured', 'core.cited_observations']);

-- Which measurements compare. Two figures say the same thing only when they measure the same
-- way: the same method and statistic, or two routers' percentiles of their own live traffic (an
-- endpoint measured by OpenRouter and by Vercel's gateway is two independent measurements of the
-- same kind, over 30 and 60 minutes). Anything else is never ranked, corroborated or disputed
-- against each other; far apart, it is listed as a gap between methods (mart.method_gaps).
CREATE OR REPLACE MACRO mart.method_family(method) AS
    CASE WHEN method IN ('percentiles of live routed traffic', 'percentiles of live gateway traffic')
         THEN 'percentiles of live traffic' ELSE method END;
CREATE OR REPLACE MACRO mart.same_measurement(a_method, a_statistic, b_method, b_statistic) AS
    mart.method_family(a_method) = mart.method_family(b_method)
    AND a_statistic IS NOT DISTINCT FROM b_statistic;
-- Two figures are independent when neither source repeats the other: different publishers,
-- different lineage (a claim repeated by the press is one claim; a compilation's figure repeats
-- the page it cites), neither cites the other, neither cites a page of the other's publisher,
-- and neither snapshot was reconstructed from the other's source, nor both from one document.
CREATE OR REPLACE MACRO mart.independent(a_source, a_publisher, a_lineage, a_cited, a_cited_by,
                                         a_rebuilt_from, b_source, b_publisher, b_lineage,
                                         b_cited, b_cited_by, b_rebuilt_from) AS
    a_publisher <> b_publisher AND a_lineage <> b_lineage
    AND a_source IS DISTINCT FROM b_cited AND b_source IS DISTINCT FROM a_cited
    AND a_publisher IS DISTINCT FROM b_cited_by AND b_publisher IS DISTINCT FROM a_cited_by
    AND a_source IS DISTINCT FROM b_rebuilt_from AND b_source IS DISTINCT FROM a_rebuilt_from
    AND (a_rebuilt_from IS NULL OR a_rebuilt_from IS DISTINCT FROM b_rebuilt_from);
-- Observations with their source's publisher, the publisher of the page they cite, and the
-- source a reconstructed snapshot was rebuilt from: what the independence rule compares.
CREATE OR REPLACE MACRO mart.published_of(relation) AS TABLE
SELECT o.*, src.publisher, cited.publisher AS cited_publisher,
       nullif(split_part(snap.reconstructed_from_snapshot_id, '/', 1), '') AS rebuilt_from
FROM query_table(relation) AS o
JOIN core.sources AS src ON src.source_id = o.source_id
JOIN core.snapshots AS snap ON snap.snapshot_id = o.snapshot_id
LEFT JOIN core.sources AS cited ON cited.source_id = o.cited_source_id;
-- Only point figures (exact or approximate) compare; ranges and bounds do not, and neither does
-- a suspect figure. Two figures agree when observed within 7 days and the larger is at most 10%
-- above the smaller.
CREATE OR REPLACE MACRO mart.point_figure(value, qualifier) AS
    value IS NOT NULL AND coalesce(qualifier, 'approx') = 'approx';
CREATE OR REPLACE MACRO mart.within_a_week(a_at, b_at) AS
    abs(epoch(a_at) - epoch(b_at)) <= 7 * 86400;
CREATE OR REPLACE MACRO mart.disagree(a_value, b_value) AS
    greatest(a_value, b_value) > 1.10 * least(a_value, b_value);

-- Pairs of current figures from different sources on comparable endpoints, same metric and
-- scope, observed within 7 days of each other: each source's current figure against every other
-- source's. Each pair appears in both orders.
CREATE OR REPLACE VIEW mart.current_pairs AS
WITH points AS (
    SELECT * FROM mart.published_of('mart.current_observations')
    WHERE mart.point_figure(value, qualifier) AND NOT suspect
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
       a.window_minutes AS a_window_minutes, b.window_minutes AS b_window_minutes,
       a.observed_at AS a_observed_at, b.observed_at AS b_observed_at,
       mart.same_measurement(a.method, a.statistic, b.method, b.statistic) AS same_measurement,
       mart.independent(a.source_id, a.publisher, a.lineage, a.cited_source_id,
                        a.cited_publisher, a.rebuilt_from, b.source_id, b.publisher,
                        b.lineage, b.cited_source_id, b.cited_publisher, b.rebuilt_from)
           AS independent,
       mart.disagree(a.value, b.value) AS disagree
FROM points AS a
JOIN points AS b
  ON a.provider_id = b.provider_id AND a.model_id = b.model_id
 AND a.service_tier = b.service_tier AND a.metric = b.metric AND a.scope = b.scope
 AND a.source_id <> b.source_id
 AND core.comparable(a.provider_id, a.model_id, a.precision, a.service_tier, a.reasoning_effort,
                     a.region, b.provider_id, b.model_id, b.precision, b.service_tier,
                     b.reasoning_effort, b.region)
 AND mart.within_a_week(a.observed_at, b.observed_at);

-- The current figures with their freshness and support: the independent sources whose current
-- figure of the same measurement agrees (corroborated_by) or differs by more than 10%
-- (disputed_by).
CREATE OR REPLACE TABLE mart.current_figures AS
WITH support AS (
    SELECT a_id,
           count(DISTINCT b_source_id) FILTER (WHERE NOT disagree) AS corroborating_sources,
           list(DISTINCT b_source_id ORDER BY b_source_id) FILTER (WHERE NOT disagree)
               AS corroborated_by,
           list(DISTINCT b_source_id ORDER BY b_source_id) FILTER (WHERE disagree) AS disputed_by
    FROM mart.current_pairs
    WHERE same_measurement AND independent
    GROUP BY a_id
)
SELECT c.*,
       mart.fresh_as_of(c.observed_at, c.retrieved_at, f.latest_retrieved_at, f.confirmed_at)
           AS fresh_as_of,
       mart.is_stale(c.scope, fresh_as_of, f.data_date, f.max_age_minutes) AS stale,
       coalesce(s.corroborating_sources, 0) AS corroborating_sources,
       coalesce(s.corroborated_by, []) AS corroborated_by,
       coalesce(s.disputed_by, []) AS disputed_by,
       snap.url AS source_url
FROM mart.current_observations AS c
JOIN mart.source_freshness AS f USING (source_id)
LEFT JOIN support AS s ON s.a_id = c.observation_id
JOIN core.snapshots AS snap USING (snapshot_id)
ORDER BY c.endpoint_id, c.metric, c.scope, c.method, c.statistic;
