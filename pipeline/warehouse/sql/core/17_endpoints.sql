-- Every endpoint a figure or an offer names. A build that only added rows keeps the table and reads
-- the rows it added (the endpoint_* views: pipeline/warehouse/core.py); any other emptied it and
-- reads every row. Reading the whole history at every build was most of one more poll's load.
INSERT INTO core.endpoints BY NAME
SELECT DISTINCT endpoint_id, provider_id, model_id, precision, service_tier, reasoning_effort,
       region
FROM (
    SELECT endpoint_id, provider_id, model_id, precision, service_tier, reasoning_effort, region
    FROM endpoint_observations
    UNION ALL
    SELECT endpoint_id, provider_id, model_id, precision, service_tier, reasoning_effort, region
    FROM endpoint_endpoint_offers
)
WHERE endpoint_id NOT IN (SELECT endpoint_id FROM core.endpoints);
