"""``python -m grader.sandbox.worker SCRATCH LEVEL``: one warm worker (``server.main``)."""

from grader.sandbox.worker.server import main

main()
