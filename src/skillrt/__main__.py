"""``python -m skillrt``."""

import sys

from skillrt.cli import main

sys.exit(main())
