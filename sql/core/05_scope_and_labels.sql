-- The snapshots the build reads: listed in the store, retrieved up to its as-of time, and read by
-- their parser without error. Every fact view reads only these, so a reader never sees the rows of
-- a snapshot staged for a build that has not completed, nor of one withdrawn since.
CREATE OR REPLACE VIEW core.build_scope AS
SELECT snapshot_id, source_id, retrieved_at FROM core.snapshots WHERE in_scope;

-- Label resolutions the core joins (pipeline/normalise/labels.py): names from prose and tables
-- resolve only to a reviewed entity or by a reviewed rule; a source's stable ids resolve to a
-- reviewed entity or an unreviewed one of their own.
CREATE OR REPLACE MACRO core.named(kind_) AS TABLE
    SELECT * FROM core.labels
    WHERE kind = kind_ AND NOT stable AND status = 'resolved';
CREATE OR REPLACE MACRO core.identified(kind_) AS TABLE
    SELECT * FROM core.labels
    WHERE kind = kind_ AND stable AND status IN ('resolved', 'unreviewed');

-- How each source's format measures its figures, where its frames do not say (FormatSpec).
CREATE OR REPLACE MACRO core.measured() AS TABLE
    SELECT src.source_id, m.method, m.statistic, m.window_minutes
    FROM core.sources AS src
    JOIN core.format_measurements AS m USING (format);

-- The tier and qualifier a figure carries from its snapshot: a snapshot reconstructed from
-- another document (a compilation quoting a benchmark page) is no better than that document, so
-- its figures carry the lower of the two tiers and the qualifier its figures have there ('rounds
-- its figures to whole tokens/s': approx).
CREATE OR REPLACE VIEW core.snapshot_grades AS
SELECT s.snapshot_id, s.source_id, s.retrieved_at, s.retrieved_at_bound,
       greatest(src.tier, coalesce(doc.tier, src.tier)) AS tier,
       s.reconstructed_qualifier AS qualifier
FROM core.snapshots AS s
JOIN core.sources AS src USING (source_id)
LEFT JOIN core.snapshots AS origin ON origin.snapshot_id = s.reconstructed_from_snapshot_id
LEFT JOIN core.sources AS doc ON doc.source_id = origin.source_id
WHERE s.in_scope;
