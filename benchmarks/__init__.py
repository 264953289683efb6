"""The benchmark of the build (docs/performance.md): `python -m benchmarks --help`. Not part of
the installed package."""
