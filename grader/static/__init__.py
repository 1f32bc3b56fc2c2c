"""The static check of a student's test file: ``checker`` walks the syntax tree,
``rules`` are small functions registered under stable codes, ``lists`` the data
they read. It explains the rules to an honest student before a run; it guards
nothing (the sandbox does).
"""
