"""One module per ``grader`` command: ``check``, ``tdd``, ``diff``, ``batch``, ``bundle``,
``release``, ``audit`` and the rest; nothing here but commands.

A command takes a chapter and its inputs, does the work (running code only
through ``grader.sandbox``) and returns a frozen result of ``grader.results``;
it prints nothing and never imports an entry point. ``check`` runs its phases
from the library: ``grader.grading.jobs`` (the runs), ``grader.grading.validation`` (phase 2)
and ``grader.grading.mutation`` (phase 3). The entry points draw its result with
``grader.output``.
"""
