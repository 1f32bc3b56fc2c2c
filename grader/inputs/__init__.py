"""What the grader reads: the chapter as data and a student's submission.

The chapter: its catalog (``catalog``), the text it ships (``chapter_text``), the
chapters it builds on (``dependencies``), the patches of its mutants and wheats
(``patching``), the hypothesis settings every run uses (``hypothesis_profile``),
what each audience may hold of it (``editions``) and the key a result is filed
under (``provenance``). A submission: its folder (``submission``), where a
platform put it (``locate``) and a Python file's text (``python_source``).
Nothing here starts a process or renders output.
"""
