-- The observations a build describes: those retrieved up to its as-of time, each flagged stale
-- when older than its source's cadence allows, measured from the build's data date. The data
-- date (not the wall clock) keeps rebuilds of the same snapshots byte-identical.
CREATE OR REPLACE VIEW mart.observations_as_of AS
WITH build AS (
    SELECT as_of, data_date FROM core.build_state
),
latest_snapshot AS (
    SELECT source_id, max(retrieved_at) AS retrieved_at
    FROM core.snapshots, build
    WHERE build.as_of IS NULL OR retrieved_at <= build.as_of
    GROUP BY source_id
)
SELECT o.*,
       -- a fetch that found the newest snapshot unchanged re-confirms its figures
       CASE WHEN o.retrieved_at = l.retrieved_at AND src.confirmed_at IS NOT NULL
                 AND (build.as_of IS NULL OR src.confirmed_at <= build.as_of)
            THEN greatest(o.observed_at, src.confirmed_at)
            ELSE o.observed_at END AS fresh_as_of,
       o.scope = 'live_median'
           AND fresh_as_of < build.data_date - to_days(src.max_age_days) AS stale
FROM core.observations AS o
JOIN core.sources AS src USING (source_id)
JOIN latest_snapshot AS l USING (source_id)
CROSS JOIN build
WHERE build.as_of IS NULL OR o.retrieved_at <= build.as_of;

COMMENT ON VIEW mart.observations_as_of IS
    'Observations retrieved up to the build''s as-of time, with a stale flag against each source''s cadence.';
