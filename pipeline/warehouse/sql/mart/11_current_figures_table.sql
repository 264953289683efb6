-- The one mart table: the current figures, computed by every build from the current observations
-- it keeps (the views of the other files are created again only when their definition changes,
-- pipeline/warehouse/marts.py). Its comments are here since the table is new at every build.

CREATE OR REPLACE TABLE mart.current_figures AS
SELECT * FROM mart.current_figures_of('core.current_observations')
ORDER BY endpoint_id, metric, scope, method, statistic;

COMMENT ON TABLE mart.current_figures IS
    'The current figure per endpoint, metric, scope, method and statistic (tier first, then date), with the independent sources of the same measurement that corroborate or dispute it; kept by each build from what it adds (core.current_observations); mart.current_figures_at() computes them afresh from the whole history.';
COMMENT ON COLUMN mart.current_figures.corroborating_sources IS 'how many other sources give a comparable figure within 10%, observed within 7 days';
COMMENT ON COLUMN mart.current_figures.corroborated_by IS 'those sources';
COMMENT ON COLUMN mart.current_figures.disputed_by IS 'sources whose comparable figure differs by more than 10%, observed within 7 days';
COMMENT ON COLUMN mart.current_figures.source_url IS 'address of the snapshot';
