"""The process boundary: the only code in the grader that forks or starts a process.

``pool`` is the grader's side (``WorkerPool``, ``Job``, ``RunResult``);
``zygote`` is the warm worker that forks the processes of each run;
``recorder`` is the pytest plugin in the test process, streaming each test's
outcome; ``proxy`` is the stand-in module the tests import, which forwards
every call over ``wire`` (plain data only) to ``implementation``, the process
that runs the code under test; ``confine`` confines a run's processes at the
operating system's level; and ``mutmut_run`` starts mutmut's processes for
``grader audit``. Nothing here imports a command, an output or an entry point.
"""
