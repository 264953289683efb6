"""Which core tables grow snapshot by snapshot: named apart from their models (schema/core.py,
which re-exports them) so that a process that only copies tables, the release's Parquet writer,
starts without importing Pandera and pandas (0.7 s of its 0.9 s start)."""

# Tables derived snapshot by snapshot from staging (each row names its snapshot): like the
# observations, they are appended for the snapshots a build has not derived yet, and their rows of
# snapshots no longer usable are dropped. Every other core table is small and rebuilt whole.
PER_SNAPSHOT = ("observations", "model_figures", "endpoint_offers", "catalogue_offers")
# Of those, the tables whose every row carries its snapshot's retrieved_at: checked on the rows a
# build adds (warehouse/appended.py), relied on to find a snapshot's rows by time (validate.py).
RETRIEVED_WITH_SNAPSHOT = ("observations", "model_figures")
