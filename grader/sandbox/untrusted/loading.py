"""The module under test and the modules it brings, read from descriptors and compiled.

Each source arrives on a descriptor after the fork (the warm worker never
reads one), is compiled at once under its plain file name, and runs only when
the tests first import it; the modules a job brings beside the implementation
(an earlier chapter's) are found by name before any file could stand in.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import linecache
import os
import sys
import types
from typing import Any

SOURCE_LIMIT_BYTES = 16 * 1024 * 1024


def read_source(fd: int) -> bytes:
    """All of the source the worker's parent passed on ``fd``, which is then closed."""
    parts = []
    size = 0
    while chunk := os.read(fd, 1 << 16):
        parts.append(chunk)
        size += len(chunk)
        if size > SOURCE_LIMIT_BYTES:
            break
    os.close(fd)
    return b"".join(parts)


def brought_file(filename: str) -> bool:
    """Whether ``filename`` is one ``Compiled`` gives a module (``robin_hood.py``): a bare
    module name, where the standard library's and installed files have whole paths."""
    return filename.endswith(".py") and filename[:-3].isidentifier() and len(filename) <= 100


class Compiled:
    """A module's source, compiled as soon as it arrives, while the test process starts:
    compiling runs none of it, and the module runs only when the tests first import it."""

    def __init__(self, name: str, source: bytes) -> None:
        self.name = name
        self.filename = f"{name}.py"
        self.lines = source.decode("utf-8-sig", "replace").splitlines(keepends=True)
        self.size = len(source)
        self.code: types.CodeType | None = None
        self.error: BaseException | None = None
        try:
            self.code = compile(source, self.filename, "exec", dont_inherit=True)
        except BaseException as error:  # a syntax error, or source too deep to compile
            self.error = error

    def execute(self, module: types.ModuleType) -> None:
        """Run the module in ``module`` under its plain file name, its lines kept for reports
        (BOM and coding line honoured, as an import would); its compile error, if it had one."""
        module.__file__ = self.filename
        linecache.cache[self.filename] = (self.size, None, self.lines, self.filename)
        if self.code is None:
            raise self.error or SyntaxError(f"{self.filename} did not compile")
        exec(self.code, module.__dict__)

    def load(self) -> types.ModuleType:
        """Run it as the module of its name, as an import would."""
        module = types.ModuleType(self.name)
        sys.modules[self.name] = module
        self.execute(module)
        return module


class Dependencies(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds the modules a job brought beside the implementation, by name, among the sources
    this process read; first on ``sys.meta_path``, so no file of that name can stand in."""

    def __init__(self, modules: dict[str, Compiled]) -> None:
        self.modules = modules

    def find_spec(
        self, fullname: str, path: Any = None, target: Any = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname not in self.modules:
            return None
        return importlib.machinery.ModuleSpec(fullname, self, origin=f"{fullname}.py")

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType | None:
        return None

    def exec_module(self, module: types.ModuleType) -> None:
        self.modules[module.__name__].execute(module)
