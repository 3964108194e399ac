"""``python -m fakejs`` runs the command-line server (through :mod:`fakejs.warm.launch`, as the ``fakejs`` script)."""

import sys

from fakejs.warm.launch import main

sys.exit(main())
