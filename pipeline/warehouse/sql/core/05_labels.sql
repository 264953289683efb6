-- Run by the core build only (00_macros.sql is defined for the mart as well): these read the
-- build's label resolutions, which exist only while the core tables are loaded.
-- Label resolutions the core joins: names from prose and tables resolve only through reviewed
-- aliases; a source's stable ids resolve to a reviewed entity or an unreviewed one of their own.
CREATE OR REPLACE MACRO core.named(kind_) AS TABLE
    SELECT * FROM staging.label_resolution
    WHERE kind = kind_ AND NOT stable AND status = 'resolved';
CREATE OR REPLACE MACRO core.identified(kind_) AS TABLE
    SELECT * FROM staging.label_resolution
    WHERE kind = kind_ AND stable AND status IN ('resolved', 'unreviewed');
-- How each source's format measures its figures, where its frames do not say (FormatSpec).
CREATE OR REPLACE MACRO core.measured() AS TABLE
    SELECT src.source_id, m.method, m.statistic, m.window_minutes
    FROM core.sources AS src
    JOIN staging.format_measurements AS m USING (format);
