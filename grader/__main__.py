"""Run the grader as ``python -m grader``."""

import sys

try:
    from grader.cli import main
except KeyboardInterrupt:  # Ctrl-C while the grader is still importing: nothing to clean up
    print("grader: interrupted; no files were left behind", file=sys.stderr)
    sys.exit(130)

sys.exit(main())
