-- The snapshot each source is read from: its newest snapshot in the build's scope (retrieved up
-- to its as-of time, read by its parser without error). A newer snapshot that is damaged or that
-- its parser rejected is skipped, so the source keeps its last good snapshot instead of
-- contributing nothing. Every "newest snapshot of a source" in the mart and in the exports
-- (freshness, catalogue listings, platform documentation, source health) is this one.
CREATE OR REPLACE VIEW mart.latest_snapshots AS
WITH listed AS (
    SELECT s.source_id, s.snapshot_id, s.retrieved_at, s.retrieved_at_bound, s.url,
           s.obtained_by, s.reconstructed_from, s.in_scope,
           -- ties on retrieved_at are broken by id, so the choice is deterministic
           row_number() OVER (
               PARTITION BY s.source_id ORDER BY s.retrieved_at DESC, s.snapshot_id DESC
           ) AS recency
    FROM core.snapshots AS s, core.build_state AS b
    WHERE b.as_of IS NULL OR s.retrieved_at <= b.as_of
)
SELECT source_id, snapshot_id, retrieved_at, retrieved_at_bound, url, obtained_by,
       reconstructed_from, recency = 1 AS is_newest, recency - 1 AS newer_unusable
FROM listed
WHERE in_scope
QUALIFY row_number() OVER (PARTITION BY source_id ORDER BY recency) = 1;

-- Freshness, per source: how old a figure may be (its cadence), the snapshot the source is read
-- from (mart.latest_snapshots), and when a fetch last re-confirmed that snapshot unchanged. Ages
-- are measured from the build's data date, never from the wall clock, so rebuilds of the same
-- snapshots are byte-identical.
CREATE OR REPLACE VIEW mart.source_freshness AS
SELECT src.source_id, src.max_age_minutes, l.snapshot_id AS latest_snapshot_id,
       l.retrieved_at AS latest_retrieved_at,
       -- a fetch re-confirms the source's newest snapshot; when that one is unusable the
       -- confirmation says nothing about the older snapshot in use
       CASE WHEN l.is_newest AND (b.as_of IS NULL OR src.confirmed_at <= b.as_of)
            THEN src.confirmed_at END AS confirmed_at,
       b.as_of, b.data_date
FROM core.sources AS src
LEFT JOIN mart.latest_snapshots AS l USING (source_id)
CROSS JOIN core.build_state AS b;

-- A figure of the source's latest usable snapshot is fresh as of its latest re-confirmation.
CREATE OR REPLACE MACRO mart.fresh_as_of(observed_at, retrieved_at, latest_retrieved_at,
                                         confirmed_at) AS
    CASE WHEN retrieved_at = latest_retrieved_at AND confirmed_at IS NOT NULL
         THEN greatest(observed_at, confirmed_at) ELSE observed_at END;
-- The one staleness rule: older than the source's cadence allows, measured from the build's
-- data date (never the wall clock).
CREATE OR REPLACE MACRO mart.older_than_cadence(fresh_as_of, data_date, max_age_minutes) AS
    fresh_as_of < data_date - to_minutes(max_age_minutes);
-- Measurements and prices age; a record claim is a dated record and never goes stale.
CREATE OR REPLACE MACRO mart.is_stale(scope, fresh_as_of, data_date, max_age_minutes) AS
    scope NOT IN ('peak_per_user', 'aggregate')
    AND mart.older_than_cadence(fresh_as_of, data_date, max_age_minutes);

-- The observations of the build (core.observations reads only the snapshots in its scope), each
-- flagged stale when older than its source's cadence allows.
CREATE OR REPLACE VIEW mart.observations_as_of AS
SELECT o.*,
       mart.fresh_as_of(o.observed_at, o.retrieved_at, f.latest_retrieved_at, f.confirmed_at)
           AS fresh_as_of,
       mart.is_stale(o.scope, fresh_as_of, f.data_date, f.max_age_minutes) AS stale
FROM core.observations AS o
JOIN mart.source_freshness AS f USING (source_id);
