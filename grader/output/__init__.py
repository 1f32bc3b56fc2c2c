"""Every form a result takes: ``terminal`` (rich, imported by the entry points alone),
``check_json``, ``gradescope``, ``junit``, ``mutation_report``, ``html``,
``summary`` (GitHub's job summary) and ``audit``, with ``files`` writing
reports atomically; the sentences they share are ``grader.grading.wording``.

An output builds text or data from a result (``grader.results``); it imports
no command, so a format never depends on how its result was made.
The JSON Schemas the reports are held to live in ``schemas/``, the vendored
report viewer in ``vendor/``.
"""
