"""`Memory` is `AsyncMemory` written out synchronously: the same methods with the same signatures."""

import inspect

from kg import AsyncMemory, Memory


def _public_coroutines() -> list[str]:
    return sorted(n for n, _ in inspect.getmembers(AsyncMemory, inspect.iscoroutinefunction) if not n.startswith("_"))


def _public_generators() -> list[str]:
    return sorted(n for n, _ in inspect.getmembers(AsyncMemory, inspect.isasyncgenfunction) if not n.startswith("_"))


def test_every_async_method_has_a_sync_twin_with_the_same_signature() -> None:
    names = _public_coroutines()
    assert len(names) > 30
    for name in names:
        twin = getattr(Memory, name, None)
        assert twin is not None and not inspect.iscoroutinefunction(twin), f"Memory.{name} is missing"
        want, got = inspect.signature(getattr(AsyncMemory, name)), inspect.signature(twin)
        assert list(got.parameters.values()) == list(want.parameters.values()), name
        assert got.return_annotation == want.return_annotation, name


def test_every_async_iterator_has_a_sync_generator_twin_with_the_same_parameters() -> None:
    names = _public_generators()
    assert "export_namespace" in names
    for name in names:
        twin = getattr(Memory, name, None)
        assert twin is not None and inspect.isgeneratorfunction(twin), f"Memory.{name} is missing"
        want, got = inspect.signature(getattr(AsyncMemory, name)), inspect.signature(twin)
        assert list(got.parameters.values()) == list(want.parameters.values()), name


def test_memory_has_no_public_method_async_memory_lacks() -> None:
    extra = {n for n, m in inspect.getmembers(Memory, inspect.isfunction) if not n.startswith("_")}
    assert extra - set(_public_coroutines()) - set(_public_generators()) == set()
