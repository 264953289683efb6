-- Each registered source's state as of the build: its newest snapshot of any extraction status
-- (so a damaged or rejected one is reported here), the snapshot the build actually reads it from
-- (mart.latest_snapshots: the last good one), the last fetch, and a status naming the most
-- serious problem.
CREATE OR REPLACE VIEW mart.source_health AS
WITH build AS (
    SELECT as_of, data_date FROM core.build_state
),
newest AS (
    SELECT s.source_id, s.snapshot_id, s.retrieved_at, s.obtained_by, s.reconstructed_from,
           count(*) OVER (PARTITION BY s.source_id) AS snapshots
    FROM core.snapshots AS s, build
    WHERE build.as_of IS NULL OR s.retrieved_at <= build.as_of
    QUALIFY row_number() OVER (
        PARTITION BY s.source_id ORDER BY s.retrieved_at DESC, s.snapshot_id DESC
    ) = 1
),
fetches AS (
    SELECT f.*,
           max(f.fetched_at) FILTER (WHERE f.outcome IN ('new', 'unchanged', 'not_modified'))
               OVER (PARTITION BY f.source_id) AS last_success_at
    FROM core.fetch_outcomes AS f, build
    WHERE build.as_of IS NULL OR f.fetched_at <= build.as_of
    QUALIFY row_number() OVER (
        PARTITION BY f.source_id ORDER BY f.fetched_at DESC, f.log_line DESC
    ) = 1
),
joined AS (
    SELECT src.source_id, src.kind, src.tier, src.format, src.cadence, src.max_age_minutes,
           n.snapshots, n.snapshot_id AS latest_snapshot_id, n.retrieved_at, n.obtained_by,
           n.reconstructed_from,
           fr.latest_snapshot_id AS used_snapshot_id, fr.latest_retrieved_at AS used_retrieved_at,
           fr.confirmed_at,
           round(date_diff('second', fr.latest_retrieved_at, fr.data_date) / 86400, 1)
               AS age_days,
           -- the staleness rule of the figures, applied to the snapshot in use: whether the
           -- source was read recently enough (its figures carry their own dates)
           mart.older_than_cadence(
               mart.fresh_as_of(fr.latest_retrieved_at, fr.latest_retrieved_at,
                                fr.latest_retrieved_at, fr.confirmed_at),
               fr.data_date, fr.max_age_minutes
           ) AS stale,
           f.outcome AS last_fetch_outcome, f.fetched_at AS last_fetch_at,
           f.detail AS last_fetch_detail, f.http_status AS last_fetch_http_status,
           f.last_success_at,
           x.status AS extraction_status, x.error AS extraction_error,
           x.rows_extracted, x.row_counts
    FROM core.sources AS src
    JOIN mart.source_freshness AS fr ON fr.source_id = src.source_id
    LEFT JOIN newest AS n ON n.source_id = src.source_id
    LEFT JOIN fetches AS f ON f.source_id = src.source_id
    LEFT JOIN core.extractions AS x ON x.snapshot_id = n.snapshot_id
)
SELECT *,
       CASE WHEN latest_snapshot_id IS NULL THEN 'no_snapshot'
            WHEN extraction_status IS NULL THEN 'not_extracted'
            WHEN extraction_status <> 'ok' THEN 'extraction_failed'
            WHEN last_fetch_outcome = 'failed' THEN 'fetch_failed'
            WHEN stale THEN 'stale'
            ELSE 'ok' END AS status
FROM joined
ORDER BY source_id;

-- Any endpoint's figure over time, from two angles in one long table:
--   record = 'snapshot': every observation of every snapshot the build reads, whatever its
--            tier: how each source's figure moved;
--   record = 'release':  the figure each published release gave as current: what users saw.
-- `at_time` is the time axis: observed_at for a snapshot row, the release's data date for a
-- release row.
CREATE OR REPLACE VIEW mart.figure_history AS
SELECT 'snapshot' AS record,
       o.observed_at AS at_time,
       NULL::VARCHAR AS release_version,
       NULL::TIMESTAMPTZ AS release_data_date,
       o.endpoint_id, o.provider_id, o.model_id, o.precision, o.service_tier, o.reasoning_effort,
       o.metric, o.scope, o.method, o.statistic, o.role, o.value, o.low, o.high, o.qualifier,
       o.unit, o.tier, NULL::BOOLEAN AS stale, NULL::BOOLEAN AS is_headline,
       o.observed_at, o.retrieved_at, o.source_id, o.snapshot_id
FROM core.observations AS o
UNION ALL
SELECT 'release', r.data_date, f.version, r.data_date,
       f.endpoint_id, f.provider_id, f.model_id, f.precision, f.service_tier, f.reasoning_effort,
       f.metric, f.scope, f.method, f.statistic, NULL, f.value, f.low, f.high, f.qualifier,
       f.unit, f.tier, f.stale, f.is_headline,
       f.observed_at, f.retrieved_at, f.source_id, f.snapshot_id
FROM history.release_figures AS f
JOIN history.releases AS r USING (version);
