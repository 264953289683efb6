-- The snapshot each source is read from: its newest snapshot retrieved up to the build's as-of
-- time whose extraction succeeded. A newer snapshot that is damaged on disk or that its parser
-- rejected is skipped, so the source keeps its last good snapshot ("damaged snapshot, not used")
-- instead of contributing nothing. Every "newest snapshot of a source" in the mart and in the
-- exports (freshness, catalogue listings, platform documentation, source health) is this one.
CREATE OR REPLACE VIEW mart.latest_snapshots AS
WITH in_scope AS (
    SELECT s.source_id, s.snapshot_id, s.retrieved_at, s.url, s.obtained_by,
           s.reconstructed_from,
           x.status AS extraction_status,
           -- ties on retrieved_at are broken by id, so the choice is deterministic
           row_number() OVER (
               PARTITION BY s.source_id ORDER BY s.retrieved_at DESC, s.snapshot_id DESC
           ) AS recency
    FROM core.snapshots AS s
    LEFT JOIN core.extractions AS x USING (snapshot_id)
    CROSS JOIN core.build_state AS b
    WHERE b.as_of IS NULL OR s.retrieved_at <= b.as_of
)
SELECT source_id, snapshot_id, retrieved_at, url, obtained_by, reconstructed_from,
       recency = 1 AS is_newest,
       recency - 1 AS newer_unusable
FROM in_scope
WHERE extraction_status = 'ok'
QUALIFY row_number() OVER (PARTITION BY source_id ORDER BY recency) = 1;

COMMENT ON VIEW mart.latest_snapshots IS
    'Per source: its newest snapshot retrieved up to the build''s as-of time whose extraction succeeded (a damaged or unparseable newer snapshot is skipped). Sources without one have no row.';
COMMENT ON COLUMN mart.latest_snapshots.source_id IS 'registry id of the source';
COMMENT ON COLUMN mart.latest_snapshots.snapshot_id IS 'the snapshot the build reads the source from, <source_id>/<file>';
COMMENT ON COLUMN mart.latest_snapshots.retrieved_at IS 'when that snapshot was retrieved';
COMMENT ON COLUMN mart.latest_snapshots.url IS 'address the snapshot was retrieved from';
COMMENT ON COLUMN mart.latest_snapshots.obtained_by IS 'bundled, fetched, manual or reconstructed';
COMMENT ON COLUMN mart.latest_snapshots.reconstructed_from IS 'for a reconstructed snapshot, the title of the document it was rebuilt from (core.snapshots); null otherwise';
COMMENT ON COLUMN mart.latest_snapshots.is_newest IS 'it is also the source''s newest snapshot of any extraction status';
COMMENT ON COLUMN mart.latest_snapshots.newer_unusable IS 'newer snapshots of the source skipped because their extraction failed or they are damaged';

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

COMMENT ON VIEW mart.source_freshness IS
    'Per source: its cadence, the snapshot it is read from (newest usable one up to the build''s as-of time) and when a fetch last re-confirmed it.';
COMMENT ON COLUMN mart.source_freshness.source_id IS 'registry id of the source';
COMMENT ON COLUMN mart.source_freshness.max_age_minutes IS 'a figure older than this is stale [minutes]';
COMMENT ON COLUMN mart.source_freshness.latest_snapshot_id IS 'the snapshot the source is read from (mart.latest_snapshots); null when it has none';
COMMENT ON COLUMN mart.source_freshness.latest_retrieved_at IS 'when that snapshot was retrieved';
COMMENT ON COLUMN mart.source_freshness.confirmed_at IS 'when a fetch last found that snapshot unchanged (HTTP 304 or the same bytes); null unless it is also the source''s newest snapshot';
COMMENT ON COLUMN mart.source_freshness.as_of IS 'the build''s --as-of bound; null for every snapshot';
COMMENT ON COLUMN mart.source_freshness.data_date IS 'the build''s data date: ages are measured from it';

-- A figure of the source's latest usable snapshot is fresh as of its latest re-confirmation.
CREATE OR REPLACE MACRO mart.fresh_as_of(observed_at, retrieved_at, latest_retrieved_at,
                                         confirmed_at) AS
    CASE WHEN retrieved_at = latest_retrieved_at AND confirmed_at IS NOT NULL
         THEN greatest(observed_at, confirmed_at) ELSE observed_at END;
-- The one staleness rule: older than the source's cadence allows, measured from the build's
-- data date (never the wall clock).
CREATE OR REPLACE MACRO mart.older_than_cadence(fresh_as_of, data_date, max_age_minutes) AS
    fresh_as_of < data_date - to_minutes(max_age_minutes);
-- Only live medians go stale; a record claim is a dated record.
CREATE OR REPLACE MACRO mart.is_stale(scope, fresh_as_of, data_date, max_age_minutes) AS
    scope = 'live_median' AND mart.older_than_cadence(fresh_as_of, data_date, max_age_minutes);

-- The observations a build describes: those retrieved up to its as-of time, each flagged stale
-- when older than its source's cadence allows.
CREATE OR REPLACE VIEW mart.observations_as_of AS
SELECT o.*,
       mart.fresh_as_of(o.observed_at, o.retrieved_at, f.latest_retrieved_at, f.confirmed_at)
           AS fresh_as_of,
       mart.is_stale(o.scope, fresh_as_of, f.data_date, f.max_age_minutes) AS stale
FROM core.observations AS o
JOIN mart.source_freshness AS f USING (source_id)
WHERE f.as_of IS NULL OR o.retrieved_at <= f.as_of;

COMMENT ON VIEW mart.observations_as_of IS
    'Observations retrieved up to the build''s as-of time, with a stale flag against each source''s cadence.';
