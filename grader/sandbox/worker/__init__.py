"""The warm worker, a process of the grader's own: it forks, confines, times and sweeps runs.

``server`` is its loop (a job in, the run's two processes out, their record
back), ``forkserver`` the pristine copy of it every run's processes are forked
from, ``warm_pytest`` the pytest every fork finds (imported, configured once,
its failure reports cheaper), and ``child`` what each of those processes does
between its fork and the untrusted code: its set-up, then the code of
``untrusted/`` it runs.
Started as ``python -m grader.sandbox.worker SCRATCH LEVEL``.
"""
