-- Every endpoint a figure or an offer names. A build that only added rows keeps the table and reads
-- the rows it added (endpoint_scope: pipeline/warehouse/core.py); any other emptied it and reads
-- every snapshot's. Reading the whole history at every build was most of one more poll's load.
INSERT INTO core.endpoints BY NAME
SELECT DISTINCT endpoint_id, provider_id, model_id, precision, service_tier, reasoning_effort,
       region
FROM (
    SELECT endpoint_id, provider_id, model_id, precision, service_tier, reasoning_effort, region
    FROM core.observations SEMI JOIN endpoint_scope USING (snapshot_id)
    UNION ALL
    SELECT endpoint_id, provider_id, model_id, precision, service_tier, reasoning_effort, region
    FROM core.endpoint_offers SEMI JOIN endpoint_scope USING (snapshot_id)
)
WHERE endpoint_id NOT IN (SELECT endpoint_id FROM core.endpoints);
