"""The code that runs inside a confined run, beside the untrusted code it serves.

``recorder`` is the pytest plugin in the test process that reports each
test's outcome; ``proxy`` is the stand-in module the tests import, which
forwards every call to ``implementation``, the process that loads the module
under test. Each is loaded into a process a student's code shares, so each
imports only ``protocol``, the standard library and the test tools (pytest),
and binds what it relies on at import.
"""
