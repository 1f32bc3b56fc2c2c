"""The process boundary: the only code in the grader that forks or starts a process.

``pool`` is the grader's side (``WorkerPool``, ``Job``, ``RunResult``);
``zygote`` is the warm worker that forks one child per run; ``recorder`` is
the pytest plugin inside that child, streaming each test's outcome;
``confine`` confines an untrusted child at the operating system's level; and
``mutmut_run`` starts mutmut's processes for ``grader audit``. Nothing here
imports a command, an output or an entry point.
"""
