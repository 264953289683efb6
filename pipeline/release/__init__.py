"""The release layer: exports built from `mart`, validated, and published as versions."""
