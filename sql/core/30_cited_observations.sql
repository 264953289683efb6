-- Figures a source repeats or claims, derived by each build (they are few): a compilation's rows,
-- each joined to the endpoint of the measurement it cites, and record claims. They reach
-- core.observations with the measured figures (30_observations.sql).
--
-- A compilation's rows and the pages they may cite are temp tables first: the planner then knows
-- how few they are (inside the build's transaction it cannot estimate the lake's views) and
-- hashes them, not the figures, when it looks for the cited pages' figures below.
CREATE OR REPLACE TEMP TABLE cited_compiled AS
SELECT c.*, p.entity_id AS provider_id, m.entity_id AS model_id,
       core.pick_precision(p.precision, m.precision) AS precision,
       core.pick_service_tier(p.service_tier, m.service_tier) AS service_tier,
       coalesce(p.reasoning_effort, m.reasoning_effort) AS reasoning_effort,
       g.retrieved_at AS snapshot_retrieved_at, g.tier, g.retrieved_at_bound
FROM staging.compilation_figures AS c
JOIN core.snapshot_grades AS g USING (snapshot_id)
JOIN core.named('provider') AS p ON p.label = c.provider_label
JOIN core.named('model') AS m ON m.label = c.model_label;

-- The registered pages a row may cite: the one its link names, or, for a row that names a
-- benchmark's publisher instead of linking ("Artificial Analysis, 2026"), that publisher's T1
-- benchmark pages (the one measuring the row's provider and model is picked below).
CREATE OR REPLACE TEMP TABLE cited_candidates AS
SELECT c.snapshot_id, c.table_name, c.row_number, c.role, c.figure_text, src.source_id
FROM cited_compiled AS c
JOIN core.sources AS src
  ON src.source_id <> c.source_id
 AND (src.url = c.cited_url
      OR (c.cited_url IS NULL AND src.kind = 'benchmark' AND src.tier = 'T1'
          AND starts_with(lower(c.cited_text), lower(src.publisher))));

INSERT INTO core.cited_observations BY NAME
WITH measured AS (FROM core.measured()),
-- The cited pages' own measurements of output speed, from snapshots retrieved no later than the
-- compilation's. A semi join on the pages' few source ids: its hash table holds those ids, and
-- the filter it pushes to the scan skips the files of every other source (none read when no row
-- cites a page). The ids as a list tested on every figure read them all (43 million at 90 days
-- of polls, 2.3 s); an inner join had the planner hash every figure (1.2 GB at 8 days, past the
-- build's memory budget).
cited_pool AS (
    SELECT o.source_id, o.provider_id, o.model_id, o.precision, o.service_tier,
           o.reasoning_effort, o.region, o.value, o.retrieved_at, o.endpoint_id
    FROM core.observations AS o
    SEMI JOIN (SELECT DISTINCT source_id FROM cited_candidates) AS pages USING (source_id)
    WHERE o.role = 'measured' AND o.metric = 'output_tokens_per_s'
),
-- A compilation's figure that cites a page with the same provider and model joins that page's
-- endpoint and variant: among the cited pages' comparable endpoints, in their newest snapshot not
-- newer than the compilation's, the one whose figure is closest to the compilation's (then by
-- endpoint id). A row whose cited page has no such endpoint keeps its own variant.
cited_match AS (
    SELECT c.snapshot_id, c.table_name, c.row_number, c.role, c.figure_text,
           p.source_id AS cited_source_id, p.precision, p.service_tier, p.reasoning_effort
    FROM cited_compiled AS c
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
           NULL::VARCHAR AS region, NULL::VARCHAR AS endpoint_key,
           'output_tokens_per_s' AS metric, 'live' AS scope, c.role,
           -- a point figure ("~2,314 t/s") repeats the cited page's measurement and says so; a
           -- bound or range ("up to 740") is the compilation's own reading: no statistic
           CASE WHEN cm.method IS NOT NULL AND coalesce(c.qualifier, 'approx') = 'approx'
                THEN cm.method ELSE own.method END AS method,
           CASE WHEN cm.method IS NOT NULL AND coalesce(c.qualifier, 'approx') = 'approx'
                THEN cm.statistic END AS statistic,
           CASE WHEN cm.method IS NOT NULL AND coalesce(c.qualifier, 'approx') = 'approx'
                THEN cm.window_minutes END AS window_minutes,
           coalesce(x.cited_source_id, linked.source_id) AS cited_source_id,
           c.value, c.low, c.high, c.qualifier, 'tokens/s' AS unit,
           c.observed_at, c.retrieved_at_bound AS observed_at_bound,
           c.snapshot_retrieved_at AS retrieved_at, c.snapshot_id, c.source_id, c.tier,
           'compilation_figures' AS origin,
           c.figure_text || ' · ' || c.model_label AS quote, NULL::VARCHAR AS workload,
           false AS suspect, NULL::VARCHAR AS suspect_reason
    FROM cited_compiled AS c
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
    SEMI JOIN core.build_scope USING (snapshot_id)
    JOIN core.reviewed_claims AS c USING (claim_id)
    GROUP BY ALL
),
claim_rows AS (
    SELECT md5(concat_ws('|', c.snapshot_id, 'claim', c.claim_id)) AS observation_id,
           c.provider_id, c.model_id, c.precision, 'standard' AS service_tier,
           NULL::VARCHAR AS reasoning_effort, NULL::VARCHAR AS region,
           NULL::VARCHAR AS endpoint_key, 'output_tokens_per_s' AS metric,
           c.scope, 'claim' AS role,
           -- a claim is a vendor's record whichever page repeats it
           'vendor record' AS method, NULL::VARCHAR AS statistic,
           NULL::BIGINT AS window_minutes, NULL::VARCHAR AS cited_source_id,
           'claim:' || c.claim_id AS lineage,
           c.value, NULL::DOUBLE AS low, NULL::DOUBLE AS high, c.qualifier, 'tokens/s' AS unit,
           c.observed_at, g.retrieved_at_bound AS observed_at_bound, g.retrieved_at,
           c.snapshot_id, c.source_id, g.tier, 'claim_evidence' AS origin,
           c.quotes AS quote, NULL::VARCHAR AS workload,
           false AS suspect, NULL::VARCHAR AS suspect_reason
    FROM claimed AS c
    JOIN core.snapshot_grades AS g USING (snapshot_id)
)
SELECT r.* EXCLUDE (lineage),
       core.endpoint_id(r.provider_id, r.model_id, r.precision, r.service_tier,
                        r.reasoning_effort, r.region, r.endpoint_key) AS endpoint_id,
       -- the measurement a figure repeats: a claim, else the cited page, else its own source
       coalesce(r.lineage, r.cited_source_id, r.source_id) AS lineage
FROM (SELECT * FROM compiled_rows UNION ALL BY NAME SELECT * FROM claim_rows) AS r;

DROP TABLE cited_compiled;
DROP TABLE cited_candidates;

-- Context figures of compilation rows: a model class, a range across models, another model.
INSERT INTO core.context_figures BY NAME
SELECT p.entity_id AS provider_id, c.figure_text, c.value, c.low, c.high, c.qualifier,
       c.applies_to, m.entity_id AS model_id, c.observed_at, c.snapshot_id, c.source_id,
       g.tier, c.row_number
FROM staging.compilation_figures AS c
JOIN core.snapshot_grades AS g USING (snapshot_id)
JOIN core.named('provider') AS p ON p.label = c.provider_label
LEFT JOIN core.named('model') AS m ON m.label = c.model_label
WHERE c.role = 'context';
