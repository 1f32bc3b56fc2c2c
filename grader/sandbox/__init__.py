"""The process boundary: the only code in the grader that forks or starts a process.

Its folders say which process their code runs in, and each primitive has one home::

    grader (host/)            warm worker (worker/)         one run, confined (untrusted/)
    +-----------------+  job  +--------------------+  fork  +----------------------------+
    | pool WorkerPool | ----> | server  its loop   | -----> | test process               |
    | client Worker   |       | forkserver         |        |   pytest + recorder -------+--> events
    | job, result     | <---- | child   a run's    |        |   proxy (stand-in module)  |    to the
    | mutmut_run      | record|         set-up     |        |     | calls: plain data    |    worker
    |                 |       | warm_pytest pytest |        |     |                      |
    |                 |       |         made once  |        |     v                      |
    +-----------------+       +--------------------+        | implementation process     |
                                                            |   the module under test    |
                                                            +----------------------------+

    used by all three:  protocol  every message, one framing (length-prefixed, big-endian)
                        levels    the isolation levels' names and order (no process code)
                        confine/  one module per kernel concern; contain.fork_confined
                        libc      the ctypes calls     procfs  the only reader of /proc
                        reaper    the only code that signals, kills, sweeps or waits

The grader (``host/``) sends a job to a warm worker over a socket; the worker
(``worker/``) forks the run's two processes from its fork server, confines
them (``confine``) and reads the test process's events. In the run, the test
process runs pytest with the recorder and imports the stand-in module, which
forwards every call as plain data to the implementation process: only the
test process holds the outcome channel, only the implementation process holds
the code under test. ``host/`` never imports ``untrusted/`` or ``worker/``, and
``untrusted/`` imports only ``protocol``, the standard library and pytest
(``tests/test_layout.py`` holds both). Nothing here imports a command, an
output or an entry point.
"""
