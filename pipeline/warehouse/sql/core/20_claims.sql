-- Reviewed claims that at least one snapshot the build reads still carries, and where each was
-- found. build_scope, not staging.extractions: staging also holds snapshots past --as-of.
INSERT INTO core.claims BY NAME
SELECT c.claim_id, c.provider_id, c.model_id,
       core.endpoint_id(c.provider_id, c.model_id, c.precision, 'standard', NULL) AS endpoint_id,
       nullif(c.hardware, '') AS hardware, c.figure_text, c.value, c.qualifier, 'tokens/s' AS unit,
       c.scope, c.precision, nullif(c.technique, '') AS technique,
       nullif(c.verified_by, '') AS verified_by, nullif(c.claimed, '') AS claimed,
       nullif(c.notes, '') AS notes
FROM staging.reviewed_claims AS c
WHERE c.claim_id IN (
    SELECT e.claim_id FROM staging.claim_evidence AS e
    SEMI JOIN build_scope USING (snapshot_id)
);

INSERT INTO core.claim_evidence BY NAME
SELECT e.claim_id, e.source_id, e.snapshot_id, src.tier, s.retrieved_at, e.quote
FROM staging.claim_evidence AS e
SEMI JOIN build_scope USING (snapshot_id)
JOIN core.snapshots AS s ON s.snapshot_id = e.snapshot_id
JOIN core.sources AS src ON src.source_id = e.source_id;
