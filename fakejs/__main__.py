"""``python -m fakejs`` runs the command-line server."""

import sys

from fakejs.cli import main

sys.exit(main())
