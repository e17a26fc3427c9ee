"""Replays of a preset's stream against the real systems its policies are named after: Redis for
the cache topic, nginx for rate limiting. It starts the server itself on 127.0.0.1 (from the
Debian packages ``make test`` installs) with a generated configuration in a temporary folder,
or talks to ``--address``; the server and its files are gone on exit, on Ctrl-C and on error.
Wall time, sockets and subprocesses live here, never in sims/."""
