-- The headline's preference among measurement methods (lower first): see the rule below.
CREATE OR REPLACE MACRO mart.method_preference(method) AS
    CASE method WHEN 'fixed-workload probe' THEN 1
                WHEN 'percentiles of live routed traffic' THEN 2
                WHEN 'percentiles of live gateway traffic' THEN 3
                WHEN 'one-off run' THEN 4 ELSE 5 END;

-- The headline per provider: its current output speed from a benchmark or a compilation (tier T1
-- or T2; never the press), a central figure (median or p50), on its reference model.
--   * fresh figures first; among them T1 before T2 (a figure read from a reconstruction is graded
--     with the document it was rebuilt from: core.snapshot_grades), then the reference model (the
--     one the provider's newest compilation headline names), then the preferred method, then the
--     fastest;
--   * stale figures only when the provider has no fresh one (flagged), and then the newest of
--     them wins, whatever its tier or model: a stale record of years ago says less about the
--     provider today than a newer figure on another model;
--   * a benchmark's own figure before a compilation's repetition of it, at equal tier;
--   * a suspect figure (its source's own fields contradict it) never becomes a headline, nor does
--     a bound or a range ("up to 740" is not a median);
--   * method preference: Artificial Analysis's fixed-workload probe median (the same prompt for
--     every provider, over 72 hours), then the routers' p50 of live traffic (real traffic,
--     prompts and load differing per endpoint, 30 or 60 minutes), then a one-off run; the
--     method, the tier and staleness stand in the rule's text and in the headline's display.
-- Context figures are those the newest compilation gives beside the provider's headline.
CREATE OR REPLACE VIEW mart.provider_headline AS
WITH candidates AS (
    SELECT *, mart.method_preference(method) AS method_rank FROM mart.current_figures
    WHERE tier IN ('T1', 'T2') AND metric = 'output_tokens_per_s' AND scope IN ('live', 'one_off')
      AND mart.point_figure(value, qualifier) AND statistic IN ('median', 'p50')
      AND NOT suspect
),
reference AS (
    SELECT provider_id, model_id, precision, service_tier, reasoning_effort,
           source_id AS reference_source_id, snapshot_id AS reference_snapshot_id
    FROM core.observations
    WHERE origin = 'compilation_figures' AND role = 'headline'
    QUALIFY row_number() OVER (PARTITION BY provider_id ORDER BY observed_at DESC, source_id) = 1
),
scored AS (
    SELECT c.*, r.reference_source_id, r.reference_snapshot_id,
           r.model_id IS NOT NULL
             AND c.model_id = r.model_id
             AND (r.service_tier = 'standard' OR c.service_tier = r.service_tier)
             AND (r.reasoning_effort IS NULL OR c.reasoning_effort = r.reasoning_effort)
             AND (r.precision = 'unknown' OR c.precision = r.precision) AS on_reference
    FROM candidates AS c
    LEFT JOIN reference AS r USING (provider_id)
),
ranked AS (
    SELECT *,
           CASE WHEN NOT stale AND on_reference THEN 'reference model named by the newest compilation'
                WHEN NOT stale THEN 'fastest fresh figure'
                ELSE 'stale: no fresh figure, the newest one' END
               || '; ' || tier || '; method: ' || method || coalesce(' (' || statistic || ')', '')
               AS headline_rule,
           row_number() OVER (
               PARTITION BY provider_id
               ORDER BY stale,
                        CASE WHEN NOT stale THEN tier END,
                        CASE WHEN NOT stale THEN on_reference END DESC,
                        CASE WHEN NOT stale THEN method_rank END,
                        CASE WHEN stale THEN epoch(observed_at) END DESC,
                        tier, origin = 'compilation_figures', on_reference DESC, method_rank,
                        value DESC, endpoint_id
           ) AS pick
    FROM scored
)
SELECT * EXCLUDE (pick, method_rank) FROM ranked WHERE pick = 1;

CREATE OR REPLACE VIEW mart.headline_context AS
SELECT cf.*
FROM core.context_figures AS cf
JOIN mart.provider_headline AS h
  ON h.provider_id = cf.provider_id AND h.reference_snapshot_id = cf.snapshot_id;
