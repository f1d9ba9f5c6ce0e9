"""A PyIceberg writer as any application runs one: commits retried on conflict, on a thread of its own while a
test runs maintenance against the same table (compaction, record expiration)."""

from __future__ import annotations

import threading
from typing import Callable

from pyiceberg.exceptions import CommitFailedException


def append_with_retries(table, data, attempts: int = 30) -> None:
    """What any PyIceberg writer does on a commit conflict: refresh and try again."""
    for attempt in range(attempts):
        try:
            table.append(data)
            return
        except CommitFailedException:
            if attempt == attempts - 1:
                raise
            table.refresh()


class Background:
    """Runs `work` on a thread: `done` is set when it ends, `errors` holds what it raised."""

    def __init__(self, work: Callable[[], None]):
        self.errors: list[BaseException] = []
        self.done = threading.Event()
        self._thread = threading.Thread(target=self._run, args=(work,))
        self._thread.start()

    def _run(self, work: Callable[[], None]) -> None:
        try:
            work()
        except BaseException as e:  # noqa: BLE001 - reported by the test's thread
            self.errors.append(e)
        finally:
            self.done.set()

    def join(self) -> None:
        self._thread.join()
