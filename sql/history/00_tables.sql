-- Release history. Core tables are deleted and rebuilt by every build, so what must outlive a
-- build lives in schema `history`: one row per published release and each release's current
-- figures, written when a release is published. pipeline/release/history.py runs this file
-- before inserting, and apply_marts before the mart views (mart.figure_history reads them).
-- Rows are only ever added.
CREATE SCHEMA IF NOT EXISTS history;

CREATE TABLE IF NOT EXISTS history.releases (
    version VARCHAR NOT NULL,
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
    figures INTEGER NOT NULL,
    lake_snapshot BIGINT  -- the lake snapshot of the build the release was made from
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
    region VARCHAR,
    metric VARCHAR NOT NULL,
    scope VARCHAR NOT NULL,
    method VARCHAR,
    statistic VARCHAR,
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
    snapshot_id VARCHAR NOT NULL
    -- one row per version, endpoint, metric, scope, method and statistic (method and statistic
    -- may be null, so no primary key states it: pipeline/release/history.py writes it so)
);

COMMENT ON TABLE history.release_figures IS
    'Each release''s current figures: the live figures of its inference.json, one row per endpoint, metric, scope, method and statistic.';
COMMENT ON COLUMN history.release_figures.region IS 'variant: region of a regional endpoint; null for the default one';
COMMENT ON COLUMN history.release_figures.method IS 'how the figure was measured; null in releases before schema 1.2, which did not record it';
COMMENT ON COLUMN history.release_figures.statistic IS 'median, p50, p75, p90, p95 or p99; null when not stated';
COMMENT ON COLUMN history.release_figures.version IS 'the release (history.releases.version)';
COMMENT ON COLUMN history.release_figures.endpoint_id IS 'the endpoint, as in core.endpoints';
COMMENT ON COLUMN history.release_figures.provider_id IS 'inference provider';
COMMENT ON COLUMN history.release_figures.model_id IS 'canonical model';
COMMENT ON COLUMN history.release_figures.precision IS 'variant: precision, unknown when the source does not state it';
COMMENT ON COLUMN history.release_figures.service_tier IS 'variant: service tier (standard, turbo, fast, latency-optimized, reference, flex, priority)';
COMMENT ON COLUMN history.release_figures.reasoning_effort IS 'variant: reasoning effort (low, medium, high, minimal, xhigh, max, none, reasoning); null when not stated';
COMMENT ON COLUMN history.release_figures.metric IS 'what was measured or listed (core.observations.metric)';
COMMENT ON COLUMN history.release_figures.scope IS 'live or one_off (the live figures of the release; never compared across scopes)';
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
COMMENT ON COLUMN history.releases.lake_snapshot IS 'the lake snapshot of the build the release was made from: `speedbook sql --release` reads the warehouse at it';
