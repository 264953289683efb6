-- Any endpoint's figure over time, from two angles in one long table:
--   record = 'snapshot': every observation of every snapshot the build may use (retrieved up to
--            its as-of time), whatever its tier: how each source's figure moved;
--   record = 'release':  the figure each published release gave as current: what users saw.
-- `at_time` is the time axis: observed_at for a snapshot row, the release's data date for a release row.
CREATE OR REPLACE VIEW mart.figure_history AS
SELECT 'snapshot' AS record,
       o.observed_at AS at_time,
       NULL::VARCHAR AS release_version,
       NULL::TIMESTAMPTZ AS release_data_date,
       o.endpoint_id, o.provider_id, o.model_id, o.precision, o.service_tier, o.reasoning_effort,
       o.metric, o.scope, o.role, o.value, o.low, o.high, o.qualifier, o.unit, o.tier,
       NULL::BOOLEAN AS stale, NULL::BOOLEAN AS is_headline,
       o.observed_at, o.retrieved_at, o.source_id, o.snapshot_id
FROM core.observations AS o, core.build_state AS b
WHERE b.as_of IS NULL OR o.retrieved_at <= b.as_of
UNION ALL
SELECT 'release', r.data_date, f.version, r.data_date,
       f.endpoint_id, f.provider_id, f.model_id, f.precision, f.service_tier, f.reasoning_effort,
       f.metric, f.scope, NULL, f.value, f.low, f.high, f.qualifier, f.unit, f.tier,
       f.stale, f.is_headline,
       f.observed_at, f.retrieved_at, f.source_id, f.snapshot_id
FROM history.release_figures AS f
JOIN history.releases AS r USING (version);

COMMENT ON VIEW mart.figure_history IS
    'Any endpoint''s figure over time: every snapshot''s observation (record = snapshot) and the current figure of every published release (record = release).';
COMMENT ON COLUMN mart.figure_history.record IS 'snapshot: one observation of one snapshot; release: the figure a published release gave as current';
COMMENT ON COLUMN mart.figure_history.at_time IS 'time axis: observed_at for a snapshot row, the release''s data date for a release row (UTC)';
COMMENT ON COLUMN mart.figure_history.release_version IS 'the release (history.releases.version); null for snapshot rows';
COMMENT ON COLUMN mart.figure_history.release_data_date IS 'the release''s data date; null for snapshot rows';
COMMENT ON COLUMN mart.figure_history.endpoint_id IS 'provider/model/precision/service_tier/reasoning_effort';
COMMENT ON COLUMN mart.figure_history.provider_id IS 'inference provider';
COMMENT ON COLUMN mart.figure_history.model_id IS 'canonical model';
COMMENT ON COLUMN mart.figure_history.precision IS 'variant: precision, unknown when the source does not state it';
COMMENT ON COLUMN mart.figure_history.service_tier IS 'variant: service tier (standard, turbo, fast, latency-optimized, reference)';
COMMENT ON COLUMN mart.figure_history.reasoning_effort IS 'variant: reasoning effort (low, medium, high); null when not stated';
COMMENT ON COLUMN mart.figure_history.metric IS 'output_tokens_per_s, ttft_s, e2e_s or price_blended_usd_per_mtok';
COMMENT ON COLUMN mart.figure_history.scope IS 'live_median, peak_per_user or aggregate; never compare across scopes';
COMMENT ON COLUMN mart.figure_history.role IS 'snapshot rows: what the figure is on its page (measured, headline, claim, ...); null for release rows';
COMMENT ON COLUMN mart.figure_history.value IS 'the figure in unit; null when only a range or bound is known';
COMMENT ON COLUMN mart.figure_history.low IS 'lower end of a range or bound, in unit';
COMMENT ON COLUMN mart.figure_history.high IS 'upper end of a range or bound, in unit';
COMMENT ON COLUMN mart.figure_history.qualifier IS 'approx, at_least, up_to or range as the source wrote it; null when exact';
COMMENT ON COLUMN mart.figure_history.unit IS 'unit of value, low and high';
COMMENT ON COLUMN mart.figure_history.tier IS 'tier of the figure''s source: T1, T2 or T3';
COMMENT ON COLUMN mart.figure_history.stale IS 'release rows: stale in that release; null for snapshot rows';
COMMENT ON COLUMN mart.figure_history.is_headline IS 'release rows: the provider''s headline in that release; null for snapshot rows';
COMMENT ON COLUMN mart.figure_history.observed_at IS 'when the source says the figure was measured (UTC)';
COMMENT ON COLUMN mart.figure_history.retrieved_at IS 'when the snapshot holding it was retrieved (UTC)';
COMMENT ON COLUMN mart.figure_history.source_id IS 'registry id of the source';
COMMENT ON COLUMN mart.figure_history.snapshot_id IS 'the snapshot the figure was read from';
