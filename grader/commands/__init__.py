"""One module per ``grader`` command: ``check``, ``tdd``, ``diff``, ``batch``, ``bundle``,
``release`` and ``audit`` (with ``mutmut_driver``, its knowledge of mutmut).

A command takes a chapter and its inputs, does the work (running code only
through ``grader.sandbox``) and returns a frozen result; it prints nothing and
never imports an entry point. The entry points draw its result with
``grader.output``.
"""
