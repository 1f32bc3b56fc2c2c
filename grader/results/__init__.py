"""The results layer: the frozen values a command returns and every output draws.

A command (``grader/commands/``) computes one of these; an output (``grader/output/``)
or an entry point renders it. Both import this package, and this package imports
no command and no output, so a format never depends on how a result was made.
The statuses these values carry, and the kill rule, are
``grader.sandbox.protocol.status`` (a run's recorder sends a test's status).

- ``check``: what ``grader check`` finds (``CheckReport`` and its parts);
- ``audit``: what ``grader audit`` finds over mutmut's generated mutants;
- ``batch``: a class's results (the gradebook row, a batch, a merge, a manifest);
- ``replay``: a report graded again and compared;
- ``kit``: what the kit-building commands made (``bundle``, ``release``, ``tdd``).

Every field carries a docstring: a reader of a format finds what a value means here.
"""
