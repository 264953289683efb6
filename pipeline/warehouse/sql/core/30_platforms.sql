-- Catalogue entries from every catalogue snapshot the build reads (build_scope), with the
-- model (reviewed, or unreviewed under the catalogue's id) and the precision and service tier
-- the name carries.
INSERT INTO core.platform_models BY NAME
SELECT ps.platform_id, c.platform_model_id, c.name, c.publisher, c.task,
       r.entity_id AS model_id, coalesce(r.precision, 'unknown') AS precision,
       coalesce(r.service_tier, 'standard') AS service_tier,
       c.function_calling, c.beta, c.lora, c.context_window,
       c.price_input_usd_per_mtok, c.price_output_usd_per_mtok, c.planned_deprecation,
       c.source_id, c.snapshot_id, c.observed_at
FROM staging.catalogue_entries AS c
SEMI JOIN build_scope USING (snapshot_id)
JOIN staging.platform_sources AS ps
  ON ps.source_id = c.source_id AND ps.catalogue_provider_id IS NULL
LEFT JOIN core.identified('model') AS r ON r.label = c.platform_model_id;
