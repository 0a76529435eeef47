"""`Memory` is `AsyncMemory` and `Client` is `AsyncClient`, synchronous: the same methods with the
same signatures (both made by `kg.synchronous.twin`; `tests/typecheck_usage.py` holds the types)."""

import inspect

import pytest

from kg import AsyncClient, AsyncMemory, Client, Memory

PAIRS = [(AsyncMemory, Memory), (AsyncClient, Client)]


def _public(cls: type, kind) -> list[str]:
    return sorted(n for n, _ in inspect.getmembers(cls, kind) if not n.startswith("_"))


@pytest.mark.parametrize("async_cls, sync_cls", PAIRS)
def test_every_async_method_has_a_sync_twin_with_the_same_signature(async_cls: type, sync_cls: type) -> None:
    names = _public(async_cls, inspect.iscoroutinefunction)
    assert len(names) > 25
    for name in names:
        twin = getattr(sync_cls, name, None)
        assert twin is not None and inspect.isfunction(twin), f"{sync_cls.__name__}.{name} is missing"
        assert not inspect.iscoroutinefunction(twin), name
        want, got = inspect.signature(getattr(async_cls, name)), inspect.signature(twin)
        assert list(got.parameters.values()) == list(want.parameters.values()), name
        assert got.return_annotation == want.return_annotation, name
        assert name == "close" or twin.__doc__ == getattr(async_cls, name).__doc__, name  # close: the loop too


def test_every_async_iterator_has_a_sync_generator_twin_with_the_same_parameters() -> None:
    names = _public(AsyncMemory, inspect.isasyncgenfunction)
    assert "export_namespace" in names
    for name in names:
        twin = getattr(Memory, name, None)
        assert twin is not None and inspect.isgeneratorfunction(twin), f"Memory.{name} is missing"
        want, got = inspect.signature(getattr(AsyncMemory, name)), inspect.signature(twin)
        assert list(got.parameters.values()) == list(want.parameters.values()), name


@pytest.mark.parametrize("async_cls, sync_cls", PAIRS)
def test_no_sync_twin_has_a_public_method_its_async_class_lacks(async_cls: type, sync_cls: type) -> None:
    extra = set(_public(sync_cls, inspect.isfunction))
    assert extra - set(_public(async_cls, inspect.iscoroutinefunction)) \
        - set(_public(async_cls, inspect.isasyncgenfunction)) == set()
