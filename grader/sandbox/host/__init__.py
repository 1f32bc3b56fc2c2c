"""The sandbox's side in the grader's own process: nothing here runs untrusted code.

``pool`` hands runs to warm workers (``WorkerPool``), ``client`` is the
grader's end of one worker (start it, send it a job, read its answers on the
grader's own clock), ``job`` says what a run is asked to do (``Job``,
``Interface``), ``result`` turns a worker's record into a ``RunResult``, and
``mutmut_run`` starts mutmut's processes for ``grader audit``. Nothing here
imports ``untrusted/``: the grader never loads the code a run is confined to.
"""
