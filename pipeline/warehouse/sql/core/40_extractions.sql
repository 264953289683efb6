-- How each snapshot's extraction went, copied from the staging cache so the core layer (and
-- mart.source_health, and the Parquet copy) can say which snapshots were read and which failed
-- without reaching into staging. extracted_at is left out: it is wall-clock time, and core tables
-- must come out the same from the same snapshots.
INSERT INTO core.extractions BY NAME
SELECT snapshot_id, source_id, format, parser_version, status, error,
       coalesce(list_sum(map_values(json_transform(row_counts, '"MAP(VARCHAR, BIGINT)"'))), 0)
           AS rows_extracted,
       row_counts
FROM staging.extractions;
