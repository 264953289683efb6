-- Every endpoint a figure or an offer names: from the sources' keys and the derived figures.
INSERT INTO core.endpoints BY NAME
SELECT DISTINCT endpoint_id, provider_id, model_id, precision, service_tier, reasoning_effort,
       region, endpoint_key
FROM (
    SELECT endpoint_id, provider_id, model_id, precision, service_tier, reasoning_effort,
           region, endpoint_key
    FROM core.endpoint_keys
    UNION ALL
    SELECT endpoint_id, provider_id, model_id, precision, service_tier, reasoning_effort,
           region, endpoint_key
    FROM core.cited_observations
);

-- Reviewed claims that at least one snapshot the build reads still carries, and where each was
-- found.
INSERT INTO core.claims BY NAME
SELECT c.claim_id, c.provider_id, c.model_id,
       core.endpoint_id(c.provider_id, c.model_id, c.precision, 'standard', NULL, NULL, NULL)
           AS endpoint_id,
       nullif(c.hardware, '') AS hardware, c.figure_text, c.value, c.qualifier, 'tokens/s' AS unit,
       c.scope, c.precision, nullif(c.technique, '') AS technique,
       nullif(c.verified_by, '') AS verified_by, nullif(c.claimed, '') AS claimed,
       nullif(c.notes, '') AS notes
FROM core.reviewed_claims AS c
WHERE c.claim_id IN (
    SELECT e.claim_id FROM staging.claim_evidence AS e SEMI JOIN core.build_scope USING (snapshot_id)
);

INSERT INTO core.claim_evidence BY NAME
SELECT e.claim_id, e.source_id, e.snapshot_id, g.tier, g.retrieved_at, e.quote
FROM staging.claim_evidence AS e
JOIN core.snapshot_grades AS g USING (snapshot_id);
