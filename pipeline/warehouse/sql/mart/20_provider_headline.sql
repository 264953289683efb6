-- The headline's preference among measurement methods (lower first): see the rule below.
CREATE OR REPLACE MACRO mart.method_preference(method) AS
    CASE method WHEN 'fixed-workload probe' THEN 1 WHEN 'percentiles of live routed traffic' THEN 2
                WHEN 'one-off run' THEN 3 ELSE 4 END;

-- The headline per provider: its current T1 live median output speed on its reference model.
--   * the reference model is the one the provider's newest compilation headline names (the
--     figure itself must still come from a T1 source; the compilation only picks the model);
--   * with no compilation headline, or no T1 figure on that model, the fastest current T1 figure;
--   * stale figures are used only when the provider has no fresh T1 figure at all (flagged),
--     and then the newest of them wins, whatever its model: a stale figure on the reference
--     model says less about the provider today than a newer one on another model;
--   * with no T1 figure of any age, the provider has no headline.
--   * candidates are central figures (a median or p50); among otherwise equal candidates the
--     headline prefers Artificial Analysis's fixed-workload probe median (the same prompt for
--     every provider, over 72 hours: comparable across providers), then OpenRouter's p50 of
--     live routed traffic (real traffic, but its prompts and load differ per endpoint and its
--     window is 30 minutes), then a one-off run; the method stands in the rule's text.
-- Context figures are those the newest compilation gives beside the provider's headline.
CREATE OR REPLACE VIEW mart.provider_headline AS
WITH candidates AS (
    SELECT *, mart.method_preference(method) AS method_rank FROM mart.current_figures
    WHERE tier = 'T1' AND metric = 'output_tokens_per_s' AND scope = 'live_median'
      AND value IS NOT NULL AND statistic IN ('median', 'p50')
),
reference AS (
    SELECT provider_id, model_id, precision, service_tier, reasoning_effort,
           source_id AS reference_source_id, snapshot_id AS reference_snapshot_id
    FROM mart.observations_as_of
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
                WHEN NOT stale THEN 'fastest fresh T1 figure'
                ELSE 'stale: no fresh T1 figure' END
               || '; method: ' || method || coalesce(' (' || statistic || ')', '')
               AS headline_rule,
           row_number() OVER (
               PARTITION BY provider_id
               ORDER BY stale,
                        -- fresh figures: the reference model first, then the preferred
                        -- method, then the fastest
                        CASE WHEN NOT stale THEN on_reference END DESC,
                        CASE WHEN NOT stale THEN method_rank END,
                        -- only stale figures: the newest first (reference, then value on a tie)
                        CASE WHEN stale THEN epoch(observed_at) END DESC,
                        on_reference DESC, value DESC, endpoint_id
           ) AS pick
    FROM scored
)
SELECT * EXCLUDE (pick, method_rank) FROM ranked WHERE pick = 1;

COMMENT ON VIEW mart.provider_headline IS
    'One headline figure per provider: its current T1 live median output speed on its reference model (rule in README).';

CREATE OR REPLACE VIEW mart.headline_context AS
SELECT cf.*
FROM core.context_figures AS cf
JOIN mart.provider_headline AS h
  ON h.provider_id = cf.provider_id AND h.reference_snapshot_id = cf.snapshot_id;

COMMENT ON VIEW mart.headline_context IS
    'Context figures the headline''s compilation gives beside it: another model or class, a range across models.';
