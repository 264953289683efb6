-- Every figure a source repeats or claims (a compilation's rows, a record claim), from every
-- successfully extracted snapshot, after the measured ones (10_measured_observations.sql): a
-- compilation's figure joins the endpoint of the measurement it cites.
INSERT INTO core.observations BY NAME
WITH ok AS (
    -- every usable snapshot, or only those not loaded yet (see pipeline/warehouse/core.py)
    SELECT snapshot_id FROM staging.observation_scope
),
providers AS (FROM core.named('provider')),
models AS (FROM core.named('model')),
measured AS (FROM core.measured()),
compiled AS (
    SELECT c.*, p.entity_id AS provider_id, m.entity_id AS model_id,
           core.pick_precision(p.precision, m.precision) AS precision,
           core.pick_service_tier(p.service_tier, m.service_tier) AS service_tier,
           coalesce(p.reasoning_effort, m.reasoning_effort) AS reasoning_effort,
           s.retrieved_at AS snapshot_retrieved_at
    FROM staging.compilation_figures AS c
    SEMI JOIN ok USING (snapshot_id)
    JOIN providers AS p ON p.label = c.provider_label
    JOIN models AS m ON m.label = c.model_label
    JOIN core.snapshots AS s ON s.snapshot_id = c.snapshot_id
),
-- The registered pages a row may cite: the one its link names, or, for a row that names a
-- benchmark's publisher instead of linking ("Artificial Analysis, 2026"), that publisher's T1
-- benchmark pages (the one measuring the row's provider and model is picked below).
cited_candidates AS (
    SELECT c.snapshot_id, c.table_name, c.row_number, c.role, c.figure_text, src.source_id
    FROM compiled AS c
    JOIN core.sources AS src
      ON src.source_id <> c.source_id
     AND (src.url = c.cited_url
          OR (c.cited_url IS NULL AND src.kind = 'benchmark' AND src.tier = 'T1'
              AND starts_with(lower(c.cited_text), lower(src.publisher))))
),
-- The cited page's own measurements of the same provider and model, from snapshots retrieved no
-- later than the compilation's (so an incremental build and a full one match alike): every one
-- loaded, this build's included (10_measured_observations.sql runs first).
cited_pool AS (
    SELECT source_id, provider_id, model_id, precision, service_tier, reasoning_effort, region,
           value, retrieved_at, endpoint_id
    FROM core.observations
    WHERE role = 'measured' AND metric = 'output_tokens_per_s'
),
-- A compilation's figure that cites a page with the same provider and model joins that page's
-- endpoint and variant: among the cited pages' comparable endpoints, in their newest snapshot
-- not newer than the compilation's, the one whose figure is closest to the compilation's (then
-- by endpoint id). A row whose cited page has no such endpoint keeps its own variant and cites
-- the page its link names, if any.
cited_match AS (
    SELECT c.snapshot_id, c.table_name, c.row_number, c.role, c.figure_text,
           p.source_id AS cited_source_id, p.precision, p.service_tier, p.reasoning_effort
    FROM compiled AS c
    JOIN cited_candidates AS k USING (snapshot_id, table_name, row_number, role, figure_text)
    JOIN cited_pool AS p
      ON p.source_id = k.source_id AND p.retrieved_at <= c.snapshot_retrieved_at
     AND core.comparable(c.provider_id, c.model_id, c.precision, c.service_tier,
                         c.reasoning_effort, NULL, p.provider_id, p.model_id, p.precision,
                         p.service_tier, p.reasoning_effort, p.region)
    QUALIFY row_number() OVER (
        PARTITION BY c.snapshot_id, c.table_name, c.row_number, c.role, c.figure_text
        ORDER BY p.retrieved_at DESC,
                 abs(p.value - coalesce(c.value, c.high, c.low)) NULLS LAST, p.endpoint_id
    ) = 1
),
compiled_rows AS (
    SELECT md5(concat_ws('|', c.snapshot_id, 'compilation', c.table_name, c.row_number, c.role,
                         c.figure_text)) AS observation_id,
           c.provider_id, c.model_id,
           coalesce(x.precision, c.precision) AS precision,
           coalesce(x.service_tier, c.service_tier) AS service_tier,
           CASE WHEN x.snapshot_id IS NULL THEN c.reasoning_effort ELSE x.reasoning_effort END
               AS reasoning_effort,
           NULL::VARCHAR AS region,
           'output_tokens_per_s' AS metric, 'live_median' AS scope, c.role,
           -- the cited page's measurement repeated; uncited, a compilation's method is unknown
           coalesce(cm.method, own.method) AS method,
           CASE WHEN cm.method IS NOT NULL THEN cm.statistic END AS statistic,
           CASE WHEN cm.method IS NOT NULL THEN cm.window_minutes END AS window_minutes,
           coalesce(x.cited_source_id, linked.source_id) AS cited_source_id,
           c.value, c.low, c.high, c.qualifier, 'tokens/s' AS unit,
           c.observed_at, c.snapshot_id, c.source_id, 'compilation_figures' AS origin,
           c.figure_text || ' · ' || c.model_label AS quote, NULL AS workload
    FROM compiled AS c
    JOIN measured AS own ON own.source_id = c.source_id
    LEFT JOIN cited_match AS x
      ON x.snapshot_id = c.snapshot_id AND x.table_name = c.table_name
     AND x.row_number = c.row_number AND x.role = c.role AND x.figure_text = c.figure_text
    LEFT JOIN core.sources AS linked
      ON linked.url = c.cited_url AND linked.source_id <> c.source_id
    LEFT JOIN measured AS cm ON cm.source_id = coalesce(x.cited_source_id, linked.source_id)
),
claimed AS (
    SELECT e.snapshot_id, e.source_id, min(e.observed_at) AS observed_at, c.*,
           string_agg(e.quote, ' … ' ORDER BY e.quote) AS quotes
    FROM staging.claim_evidence AS e
    SEMI JOIN ok USING (snapshot_id)
    JOIN staging.reviewed_claims AS c USING (claim_id)
    GROUP BY ALL
),
claim_rows AS (
    SELECT md5(concat_ws('|', snapshot_id, 'claim', claim_id)) AS observation_id,
           provider_id, model_id, precision, 'standard' AS service_tier,
           NULL AS reasoning_effort, NULL::VARCHAR AS region, 'output_tokens_per_s' AS metric,
           scope, 'claim' AS role,
           -- a claim is a vendor's record whichever page repeats it
           'vendor record' AS method, NULL::VARCHAR AS statistic,
           NULL::BIGINT AS window_minutes, NULL::VARCHAR AS cited_source_id,
           value, NULL::DOUBLE AS low, NULL::DOUBLE AS high, qualifier, 'tokens/s' AS unit,
           observed_at, snapshot_id, source_id, 'claim_evidence' AS origin,
           quotes AS quote, NULL AS workload, 'claim:' || claim_id AS lineage
    FROM claimed
),
everything AS (
    SELECT * FROM compiled_rows
    UNION ALL BY NAME SELECT * FROM claim_rows
)
SELECT e.* EXCLUDE (lineage),
       core.endpoint_id(e.provider_id, e.model_id, e.precision, e.service_tier,
                        e.reasoning_effort, e.region) AS endpoint_id,
       -- the measurement a figure repeats: a claim, else the cited page, else its own source
       coalesce(e.lineage, e.cited_source_id, e.source_id) AS lineage,
       s.retrieved_at,
       src.tier
FROM everything AS e
JOIN core.snapshots AS s USING (snapshot_id)
JOIN core.sources AS src ON src.source_id = e.source_id;
