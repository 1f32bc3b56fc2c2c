"""Every message that crosses between the sandbox's processes, and the one framing they share.

Each module holds one channel's messages, typed, beside the framing all of them use:

- ``frames``: a 4-byte big-endian length, then the body; ``frame`` and
  ``write_all`` the one writer, ``FrameReader`` the one reader;
- ``jobs``: grader -> worker on its control socket, one ``JobMessage`` (JSON) per
  job with the sources as descriptors beside it; worker -> grader on its stdout,
  ``Started``, then the ``RunRecord``; worker -> a run's root (the fork
  server's child), a ``SpawnMessage``, answered by its pid and the run's wait
  status, as numbers;
- ``events``: test process -> worker, one ``Event`` per frame, JSON, written by
  the recorder inside the run, read with bounds and checked field by field;
- ``calls``: test process <-> implementation process, every kind of message of
  a call, in plain data (``marshal``'s format, checked both ways);
- ``status``: every status a result carries (a test's outcome crosses the
  events channel), and the kill rule.

**Sockets, not pipes.** Every channel a verdict travels on (jobs, records, a
run's events, the fork server's) is made by ``frames.channel``: a Unix socket.
A process with ptrace rights over a holder of a pipe (root, or the same user
where the holder is dumpable) can open it again through ``/proc/PID/fd`` and
write into it, and so forge what the other end reads; ``/proc`` cannot open a
socket at all. The calls between a run's two processes stay on pipes, which
cost a fifth less per call: both ends are confined and not dumpable, so only
root could reach them.

This package runs inside a confined run (the recorder, the stand-in and the
implementation process import it), whose root holds of the grader only
``untrusted/`` and this folder: it imports nothing else of the grader.
"""
