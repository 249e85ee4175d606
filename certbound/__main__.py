"""``python -m certbound`` runs the command-line interface."""

from certbound.cli import main

raise SystemExit(main())
