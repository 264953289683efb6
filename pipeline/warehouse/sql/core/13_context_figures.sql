-- Context figures of compilation rows: a model class, a range across models, another model.
INSERT INTO core.context_figures BY NAME
SELECT p.entity_id AS provider_id, c.figure_text, c.value, c.low, c.high, c.qualifier,
       c.applies_to, m.entity_id AS model_id, c.observed_at, c.snapshot_id, c.source_id,
       src.tier, c.row_number
FROM staging.compilation_figures AS c
SEMI JOIN build_scope USING (snapshot_id)
JOIN core.named('provider') AS p ON p.label = c.provider_label
LEFT JOIN core.named('model') AS m ON m.label = c.model_label
JOIN core.sources AS src ON src.source_id = c.source_id
WHERE c.role = 'context';
