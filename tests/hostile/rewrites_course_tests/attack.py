"""Imported by the course tests' run, in the implementation process: rewrite the course
tests' file in the run folder, which hypothesis reads again to seed its state machines
(issue 18, route 5). A test file changed this way picks the programs the model-based test
draws; here it only adds a line, and any trace of it is the proof the wall fell."""

import glob as _glob

for _path in _glob.glob("../tests/*.py") + _glob.glob("tests/*.py"):
    try:
        with open(_path, "a") as _file:
            _file.write("\nREWRITTEN_BY_THE_IMPLEMENTATION = True\n")
    except OSError:
        pass
