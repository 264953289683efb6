-- Release history. Core tables are deleted and rebuilt by every build, so what must outlive a
-- build lives in schema `history`: one row per published release and each release's current
-- figures, written when a release is published (pipeline/release/history.py runs this file
-- too, so the tables exist before anything is inserted). Rows are only ever added.
CREATE SCHEMA IF NOT EXISTS history;

CREATE TABLE IF NOT EXISTS history.releases (
    version VARCHAR PRIMARY KEY,
    data_date TIMESTAMPTZ NOT NULL,
    as_of TIMESTAMPTZ,
    schema_version VARCHAR NOT NULL,
    built_at TIMESTAMPTZ NOT NULL,
    previous_version VARCHAR,
    summary VARCHAR NOT NULL,
    content_hashes MAP(VARCHAR, VARCHAR) NOT NULL,
    snapshots VARCHAR[] NOT NULL,
    snapshot_count INTEGER NOT NULL,
    providers INTEGER NOT NULL,
    figures INTEGER NOT NULL
);

COMMENT ON TABLE history.releases IS
    'One row per published release (exports/<version>/); survives rebuilds of the core tables.';
COMMENT ON COLUMN history.releases.version IS 'CalVer of the data date: YYYY.MM.DD, then .1, .2 for later releases of one data date';
COMMENT ON COLUMN history.releases.data_date IS 'newest snapshot retrieval the release used (UTC); the version is derived from it';
COMMENT ON COLUMN history.releases.as_of IS 'the --as-of bound of the build; null when it used every snapshot on disk';
COMMENT ON COLUMN history.releases.schema_version IS 'semver of the exports'' shape (SCHEMA_VERSION in pipeline/release/exports.py)';
COMMENT ON COLUMN history.releases.built_at IS 'when the release was published (UTC); for a release found on disk but not recorded, its folder''s modification time';
COMMENT ON COLUMN history.releases.previous_version IS 'the release its changelog compares with; null for the first';
COMMENT ON COLUMN history.releases.summary IS 'one line: what changed since previous_version (from changes.json)';
COMMENT ON COLUMN history.releases.content_hashes IS 'file name -> sha256:<hex> of each export and datapackage.json, as datapackage.json records them';
COMMENT ON COLUMN history.releases.snapshots IS 'ids (<source_id>/<file>) of every snapshot the release''s exports cite';
COMMENT ON COLUMN history.releases.snapshot_count IS 'number of entries in snapshots';
COMMENT ON COLUMN history.releases.providers IS 'providers in inference.json';
COMMENT ON COLUMN history.releases.figures IS 'live figures in inference.json (rows of history.release_figures for this version)';

CREATE TABLE IF NOT EXISTS history.release_figures (
    version VARCHAR NOT NULL,
    endpoint_id VARCHAR NOT NULL,
    provider_id VARCHAR NOT NULL,
    model_id VARCHAR NOT NULL,
    precision VARCHAR NOT NULL,
    service_tier VARCHAR NOT NULL,
    reasoning_effort VARCHAR,
    metric VARCHAR NOT NULL,
    scope VARCHAR NOT NULL,
    value DOUBLE,
    low DOUBLE,
    high DOUBLE,
    qualifier VARCHAR,
    unit VARCHAR NOT NULL,
    tier VARCHAR NOT NULL,
    stale BOOLEAN NOT NULL,
    is_headline BOOLEAN NOT NULL,
    observed_at TIMESTAMPTZ NOT NULL,
    retrieved_at TIMESTAMPTZ,
    source_id VARCHAR NOT NULL,
    snapshot_id VARCHAR NOT NULL,
    PRIMARY KEY (version, endpoint_id, metric, scope)
);

COMMENT ON TABLE history.release_figures IS
    'Each release''s current figures: the live figures of its inference.json, one row per endpoint, metric and scope.';
COMMENT ON COLUMN history.release_figures.version IS 'the release (history.releases.version)';
COMMENT ON COLUMN history.release_figures.endpoint_id IS 'provider/model/precision/service_tier/reasoning_effort, as in core.endpoints';
COMMENT ON COLUMN history.release_figures.provider_id IS 'inference provider';
COMMENT ON COLUMN history.release_figures.model_id IS 'canonical model';
COMMENT ON COLUMN history.release_figures.precision IS 'variant: precision, unknown when the source does not state it';
COMMENT ON COLUMN history.release_figures.service_tier IS 'variant: service tier (standard, turbo, fast, latency-optimized, reference)';
COMMENT ON COLUMN history.release_figures.reasoning_effort IS 'variant: reasoning effort (low, medium, high); null when not stated';
COMMENT ON COLUMN history.release_figures.metric IS 'output_tokens_per_s, ttft_s, e2e_s or price_blended_usd_per_mtok';
COMMENT ON COLUMN history.release_figures.scope IS 'live_median, peak_per_user or aggregate';
COMMENT ON COLUMN history.release_figures.value IS 'the figure in unit; null when only a range or bound is known';
COMMENT ON COLUMN history.release_figures.low IS 'lower end of a range or bound, in unit';
COMMENT ON COLUMN history.release_figures.high IS 'upper end of a range or bound, in unit';
COMMENT ON COLUMN history.release_figures.qualifier IS 'approx, at_least, up_to or range as the source wrote it; null when exact';
COMMENT ON COLUMN history.release_figures.unit IS 'unit of value, low and high (tokens/s, s, USD per 1M tokens)';
COMMENT ON COLUMN history.release_figures.tier IS 'tier of the figure''s source: T1, T2 or T3';
COMMENT ON COLUMN history.release_figures.stale IS 'older than its source''s cadence allows, measured from the release''s data date';
COMMENT ON COLUMN history.release_figures.is_headline IS 'the figure is its provider''s headline in that release';
COMMENT ON COLUMN history.release_figures.observed_at IS 'when the source says the figure was measured (UTC)';
COMMENT ON COLUMN history.release_figures.retrieved_at IS 'when the snapshot holding it was retrieved (UTC)';
COMMENT ON COLUMN history.release_figures.source_id IS 'registry id of the source';
COMMENT ON COLUMN history.release_figures.snapshot_id IS 'the snapshot the figure was read from (<source_id>/<file>)';

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
