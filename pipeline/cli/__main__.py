"""`python -m pipeline.cli` runs the `speedbook` command line."""

import sys

from pipeline.cli import main

sys.exit(main())
