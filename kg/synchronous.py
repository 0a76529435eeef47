"""The one way the synchronous twins are made: `Memory` of `AsyncMemory`, `Client` of `AsyncClient`.

A twin is a `Synchronous` (a private event loop in a background thread) whose methods are
`twin(AsyncX.method)`: each runs the async method on that loop and waits. The twin's signature is
the async method's, for `inspect` (help, the docs) and for the type checker alike (`ParamSpec`), so
neither class writes a signature of its own and a wrong call to a sync method is a type error.

    class Memory(Synchronous):
        facts = twin(AsyncMemory.facts)
"""

from __future__ import annotations

import asyncio
import functools
import threading
from typing import Any, AsyncIterator, Awaitable, Callable, Concatenate, Coroutine, Iterator, ParamSpec, TypeVar

P = ParamSpec("P")
R = TypeVar("R")

__all__ = ["Synchronous", "twin", "twin_stream"]


class Synchronous:
    """Runs `self._async`'s coroutines on a private event loop in a daemon thread."""

    _async: Any

    def __init__(self, thread_name: str) -> None:
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name=thread_name, daemon=True)
        self._thread.start()

    def _run(self, coro: Awaitable[R]) -> R:
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result()  # type: ignore[arg-type]

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the async twin, then stop the loop and its thread."""
        if self._loop.is_running():
            self._run(self._async.close())
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join()
        self._loop.close()


def twin(method: Callable[Concatenate[Any, P], Coroutine[Any, Any, R]]) -> Callable[Concatenate[Synchronous, P], R]:
    """The synchronous twin of an async method: same name, signature and docstring."""
    name = method.__name__

    @functools.wraps(method)
    def call(self: Synchronous, /, *args: P.args, **kwargs: P.kwargs) -> R:
        return self._run(getattr(self._async, name)(*args, **kwargs))

    return call


def twin_stream(method: Callable[Concatenate[Any, P], AsyncIterator[R]]
                ) -> Callable[Concatenate[Synchronous, P], Iterator[R]]:
    """The twin of an async generator: a generator yielding the same items, one by one."""
    name = method.__name__

    @functools.wraps(method)
    def call(self: Synchronous, /, *args: P.args, **kwargs: P.kwargs) -> Iterator[R]:
        items = getattr(self._async, name)(*args, **kwargs)
        while True:
            try:
                yield self._run(items.__anext__())
            except StopAsyncIteration:
                return

    return call
