"""Confinement by the operating system for every process that runs untrusted code.

A run's processes (the test process, and the implementation process where
one is used) are forked from a warm worker and then confined here, before a
line of student code runs. What this machine allows decides the *isolation
level* (``grader.sandbox.levels``), weakest first:

``none``
    The grader is not root: the run keeps the grader's user. It still gets
    its own session, resource limits, a clean environment and folder, and is
    killed with everything it started (the grader is a child subreaper and
    kills every process of a run by pidfd before it writes a report).
``uid``
    The grader is root but the kernel refuses new namespaces (a container
    without ``CAP_SYS_ADMIN``): each run drops to an unprivileged uid and gid
    of its own (``user``; no supplementary groups, no new privileges). It
    cannot write the kit, the reports or the grader's files, nor signal the
    grader or its workers. Every run sees every process and the folders every
    user may write, so a pool runs them one at a time (``grader.sandbox.host.pool``)
    and ``leftovers.remove_leftovers`` clears the shared folders after each.
``namespaces``
    Root and namespaces: ``uid`` plus a PID namespace of its own (its first
    process is a small init kept by the grader; when the run ends, the kernel
    kills everything it started, and it sees no other process), a network
    namespace of its own (no network at all, not even the machine's
    loopback), and a mount namespace whose root is built from a list, as
    bubblewrap and nsjail build one (``view.View``): a small read-only tmpfs holding
    the interpreter and its standard library, the installed packages the
    warm worker imported (pytest, hypothesis and what they import; of the
    grader only the modules a run runs), four devices, the run's own ``/proc``
    and, writable, the run's folder at ``folders.RUN_FOLDER``, a tmpfs with a size and
    a file count of its own. Nothing else exists there: not
    the kit, not the host's ``/tmp``, ``/root`` or ``/home``, not another run.

One module per kernel concern, as nsjail keeps them::

    contain        fork_confined, the one call a worker makes, read as its steps
    policy         Confinement: the level, the root's view, the identity a process takes
    pid_namespace  the run's PID namespace and its init; exit_code
    mounts         the other namespaces, and the run's root built from the view
    view           the allow-list of that root, read from the warm worker
    user           the run ids, a process's own uid, its user namespace
    keyrings       its own keyrings; seccomp refusing keyring and IPC calls
    limits         resource limits, and the mark of a run's process
    descriptors    a forked process keeps only what it was handed
    folders        a run's folder: made, handed over, capped, removed
    leftovers      what a run at uid left where every user may write
    cgroups        a run's cgroups, their limits and CPU time
    probe          the level this machine gives, measured once in a child
    report         what a run gets at a level, for a report

``probe.isolation_level()`` measures the level once per process by trying it in a
throwaway child. ``contain.fork_confined()`` is the one call a worker makes: it forks
like ``os.fork()`` and, in the child, returns only once the child is
confined. Bubblewrap would give the same namespaces, but it runs a fresh
program per run; calling the kernel through ``ctypes`` keeps the warm worker's
fork, which is what makes a run cost milliseconds. This file imports nothing, so
that ``grader.sandbox.levels`` and each module here load only what they need.
"""
