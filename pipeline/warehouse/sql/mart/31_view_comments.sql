-- Column comments for the views defined in 00-20 (and for core.build_state, which has no Pandera
-- model). They follow those files so that a view replaced there gets its comments back; the
-- data dictionary (sql/DATA_DICTIONARY.md) is generated from them. Columns a view passes through
-- from core.observations take that table's comments (pipeline/marts.py, PASS_THROUGH).

COMMENT ON TABLE core.build_state IS 'One row: the as-of bound and data date of the last core build.';
COMMENT ON COLUMN core.build_state.as_of IS 'the --as-of bound of the build; null for every snapshot';
COMMENT ON COLUMN core.build_state.data_date IS 'newest snapshot retrieval the build used: mart views measure ages from it, never from the wall clock';
COMMENT ON COLUMN core.build_state.fingerprint IS 'hash of what observations were derived from (label resolutions, reviewed claims, source tiers, core SQL): unchanged, a build appends only new snapshots'' observations';

COMMENT ON VIEW mart.observation_pairs IS
    'Pairs of point figures from different sources on comparable endpoints, same metric and scope, observed within 7 days, with whether they are the same measurement (method and statistic), independent, and more than 10% apart; each pair appears in both orders.';
COMMENT ON COLUMN mart.observations_as_of.fresh_as_of IS 'observed_at, or later when a fetch re-confirmed the source''s newest snapshot unchanged by the as-of time';
COMMENT ON COLUMN mart.observations_as_of.stale IS 'a live median whose fresh_as_of is older than its source''s cadence allows, measured from the build''s data date';

COMMENT ON COLUMN mart.observation_pairs.a_id IS 'side a in core.observations';
COMMENT ON COLUMN mart.observation_pairs.b_id IS 'side b in core.observations';
COMMENT ON COLUMN mart.observation_pairs.a_endpoint_id IS 'endpoint as side a states it';
COMMENT ON COLUMN mart.observation_pairs.b_endpoint_id IS 'endpoint as side b states it';
COMMENT ON COLUMN mart.observation_pairs.provider_id IS 'provider of both figures';
COMMENT ON COLUMN mart.observation_pairs.model_id IS 'model of both figures';
COMMENT ON COLUMN mart.observation_pairs.service_tier IS 'service tier of both figures';
COMMENT ON COLUMN mart.observation_pairs.a_precision IS 'precision as side a states it';
COMMENT ON COLUMN mart.observation_pairs.b_precision IS 'precision as side b states it';
COMMENT ON COLUMN mart.observation_pairs.a_reasoning_effort IS 'reasoning effort as side a states it';
COMMENT ON COLUMN mart.observation_pairs.b_reasoning_effort IS 'reasoning effort as side b states it';
COMMENT ON COLUMN mart.observation_pairs.unit IS 'unit of both figures';
COMMENT ON COLUMN mart.observation_pairs.a_quote IS 'side a as its source wrote it';
COMMENT ON COLUMN mart.observation_pairs.b_quote IS 'side b as its source wrote it';
COMMENT ON COLUMN mart.observation_pairs.metric IS 'metric of both figures';
COMMENT ON COLUMN mart.observation_pairs.scope IS 'scope of both figures';
COMMENT ON COLUMN mart.observation_pairs.a_source_id IS 'source of side a';
COMMENT ON COLUMN mart.observation_pairs.b_source_id IS 'source of side b (always another source)';
COMMENT ON COLUMN mart.observation_pairs.a_tier IS 'tier of side a''s source';
COMMENT ON COLUMN mart.observation_pairs.b_tier IS 'tier of side b''s source';
COMMENT ON COLUMN mart.observation_pairs.a_value IS 'figure of side a';
COMMENT ON COLUMN mart.observation_pairs.b_value IS 'figure of side b';
COMMENT ON COLUMN mart.observation_pairs.a_observed_at IS 'when side a was observed';
COMMENT ON COLUMN mart.observation_pairs.b_observed_at IS 'when side b was observed';
COMMENT ON COLUMN mart.observation_pairs.disagree IS 'the larger figure is more than 10% above the smaller';

COMMENT ON COLUMN mart.provider_headline.reference_source_id IS 'compilation whose newest headline names the provider''s reference model; null without one';
COMMENT ON COLUMN mart.provider_headline.reference_snapshot_id IS 'that compilation''s snapshot';
COMMENT ON COLUMN mart.provider_headline.on_reference IS 'the figure is on the reference model (and on its variant, where the compilation states one)';
COMMENT ON COLUMN mart.provider_headline.headline_rule IS 'rule that picked it: reference model named by the newest compilation; fastest fresh T1 figure; stale: no fresh T1 figure';

COMMENT ON COLUMN mart.headline_context.provider_id IS 'provider whose headline the figure stands beside';
COMMENT ON COLUMN mart.headline_context.figure_text IS 'as written, e.g. ''≈800 t/s on 8B-class''';
COMMENT ON COLUMN mart.headline_context.value IS 'the figure; null for a range [tokens/s]';
COMMENT ON COLUMN mart.headline_context.low IS 'range low end [tokens/s]';
COMMENT ON COLUMN mart.headline_context.high IS 'range high end [tokens/s]';
COMMENT ON COLUMN mart.headline_context.qualifier IS 'approx, at_least, up_to, range; null when exact';
COMMENT ON COLUMN mart.headline_context.applies_to IS 'model class or scope';
COMMENT ON COLUMN mart.headline_context.model_id IS 'model, when the figure names one';
COMMENT ON COLUMN mart.headline_context.observed_at IS 'when the figure was observed';
COMMENT ON COLUMN mart.headline_context.snapshot_id IS 'the compilation''s snapshot, <source_id>/<file>';
COMMENT ON COLUMN mart.headline_context.source_id IS 'the compilation';
COMMENT ON COLUMN mart.headline_context.tier IS 'tier of the compilation';
COMMENT ON COLUMN mart.headline_context.row_number IS 'row of the compilation''s table';
