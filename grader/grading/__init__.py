"""How a check grades: its runs, phases, grade and the sentences that explain it.

``jobs`` (the runs and their limits), ``validation`` (phase 2: can the student's
kills be trusted), ``mutation`` (phase 3: the tests against every mutant),
``grade`` and ``worth`` (points, and what each test earns), ``witness`` (what a
survivor shows, at which tier), ``explain``, ``model_program``, ``tracebacks``,
``timing`` and ``wording`` (the sentences phases and formats share),
``result_cache`` (each phase's result kept under what decides it) and
``mutmut_driver`` (what the kit knows of mutmut, for ``audit``).
"""
