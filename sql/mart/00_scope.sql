-- Freshness, per source: how old a figure may be (its cadence), the newest snapshot retrieved up
-- to the build's as-of time, and when a fetch last re-confirmed that snapshot unchanged. Ages are
-- measured from the build's data date, never from the wall clock, so rebuilds of the same
-- snapshots are byte-identical.
CREATE OR REPLACE VIEW mart.source_freshness AS
WITH latest AS (
    SELECT s.source_id, max(s.retrieved_at) AS latest_retrieved_at
    FROM core.snapshots AS s, core.build_state AS b
    WHERE b.as_of IS NULL OR s.retrieved_at <= b.as_of
    GROUP BY s.source_id
)
SELECT src.source_id, src.max_age_days, l.latest_retrieved_at,
       CASE WHEN b.as_of IS NULL OR src.confirmed_at <= b.as_of THEN src.confirmed_at END
           AS confirmed_at,
       b.as_of, b.data_date
FROM core.sources AS src
LEFT JOIN latest AS l USING (source_id)
CROSS JOIN core.build_state AS b;

COMMENT ON VIEW mart.source_freshness IS
    'Per source: its cadence, its newest snapshot up to the build''s as-of time and when a fetch last re-confirmed it.';
COMMENT ON COLUMN mart.source_freshness.source_id IS 'registry id of the source';
COMMENT ON COLUMN mart.source_freshness.max_age_days IS 'a figure older than this is stale [days]';
COMMENT ON COLUMN mart.source_freshness.latest_retrieved_at IS 'newest snapshot retrieved up to the as-of time';
COMMENT ON COLUMN mart.source_freshness.confirmed_at IS 'when a fetch last found that snapshot unchanged (HTTP 304 or the same bytes)';
COMMENT ON COLUMN mart.source_freshness.as_of IS 'the build''s --as-of bound; null for every snapshot';
COMMENT ON COLUMN mart.source_freshness.data_date IS 'the build''s data date: ages are measured from it';

-- A figure of the source's newest snapshot is fresh as of its latest re-confirmation.
CREATE OR REPLACE MACRO mart.fresh_as_of(observed_at, retrieved_at, latest_retrieved_at,
                                         confirmed_at) AS
    CASE WHEN retrieved_at = latest_retrieved_at AND confirmed_at IS NOT NULL
         THEN greatest(observed_at, confirmed_at) ELSE observed_at END;
-- Only live medians go stale; a record claim is a dated record.
CREATE OR REPLACE MACRO mart.is_stale(scope, fresh_as_of, data_date, max_age_days) AS
    scope = 'live_median' AND fresh_as_of < data_date - to_days(max_age_days);

-- The observations a build describes: those retrieved up to its as-of time, each flagged stale
-- when older than its source's cadence allows.
CREATE OR REPLACE VIEW mart.observations_as_of AS
SELECT o.*,
       mart.fresh_as_of(o.observed_at, o.retrieved_at, f.latest_retrieved_at, f.confirmed_at)
           AS fresh_as_of,
       mart.is_stale(o.scope, fresh_as_of, f.data_date, f.max_age_days) AS stale
FROM core.observations AS o
JOIN mart.source_freshness AS f USING (source_id)
WHERE f.as_of IS NULL OR o.retrieved_at <= f.as_of;

COMMENT ON VIEW mart.observations_as_of IS
    'Observations retrieved up to the build''s as-of time, with a stale flag against each source''s cadence.';
