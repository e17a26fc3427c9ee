"""Child processes that never outlive their parent (the server's workers, a sweep's pool)."""

from __future__ import annotations

import multiprocessing
import multiprocessing.connection
import os
import threading


def exit_with_parent() -> None:
    """In a child process: exit as soon as the parent is gone, even in the middle of a job, even
    when the parent died by SIGKILL. The parent's sentinel is a pipe end that only the parent
    holds (spawn passes no other process a copy, which fork would), so it turns readable when the
    parent dies. Does nothing in a process that multiprocessing did not start."""
    parent = multiprocessing.parent_process()
    if parent is None:
        return

    def watch() -> None:
        multiprocessing.connection.wait([parent.sentinel])
        os._exit(1)

    threading.Thread(target=watch, name="parent-watch", daemon=True).start()
