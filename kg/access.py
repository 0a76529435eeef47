"""Who may use which namespace: API keys (`[http] keys`) mapped to namespaces.

A configured key is either the key itself or `sha256:<hex digest of the key>`; the digest form
keeps secrets out of configuration files. Keys are compared in constant time and never logged.
"""

from __future__ import annotations

import hashlib
import hmac
from dataclasses import dataclass
from typing import Mapping, Sequence

from kg.core.vocabulary import Trust

LOCAL = "local"  # who erased, in an erasure record, when no key is in use (stdio, keys off)

ALL = "*"


class AccessDenied(Exception):
    """`status` 401: no or unknown key; 403: the key may not use the namespace."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def key_digest(key: str) -> str:
    """The `sha256:<hex>` form of a key, as `[http] keys` accepts it."""
    return "sha256:" + hashlib.sha256(key.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class Grant:
    """What one presented key (or no key, with authentication off) may use."""

    namespaces: frozenset[str] | None  # None: every namespace

    def allows(self, namespace: str) -> bool:
        return self.namespaces is None or namespace in self.namespaces

    def check(self, namespace: str) -> None:
        if not self.allows(namespace):
            raise AccessDenied(403, f"this API key may not use namespace {namespace!r}")


OPEN = Grant(None)


def _digest(key: str) -> str:
    return key.lower() if key.lower().startswith("sha256:") else key_digest(key)


def writer_trust(asked: Trust | None, key_trust: Trust) -> Trust:
    """The trust a write is stored with: what the call asked (None: it did not say), unless the
    caller's key writes untrusted content only; asking such a key for "trusted" is refused (403)."""
    if key_trust == "untrusted":
        if asked == "trusted":
            raise AccessDenied(403, "trust: this API key writes untrusted content only ([http] untrusted_keys)")
        return "untrusted"
    return asked or "trusted"


class Keyring:
    def __init__(self, keys: Mapping[str, Sequence[str]], untrusted: Sequence[str] = ()) -> None:
        self._digests: dict[str, frozenset[str]] = {}
        for key, namespaces in keys.items():
            self._digests[_digest(key)] = frozenset(namespaces)
        self._untrusted = frozenset(_digest(k) for k in untrusted)

    @property
    def enabled(self) -> bool:
        return bool(self._digests)

    def grant(self, presented: str | None) -> Grant:
        """The grant of a presented key; raises `AccessDenied(401)` when it is missing or unknown."""
        if not self.enabled:
            return OPEN
        if not presented:
            raise AccessDenied(401, "missing API key: send it in the X-API-Key header")
        digest = key_digest(presented)
        found: frozenset[str] | None = None
        for known, namespaces in self._digests.items():
            if hmac.compare_digest(known, digest):
                found = namespaces
        if found is None:
            raise AccessDenied(401, "unknown API key")
        return OPEN if ALL in found else Grant(found)

    def trust(self, presented: str | None) -> Trust:
        """What a key's writes are: "untrusted" for a key of `[http] untrusted_keys` (tool output,
        web pages, another agent), else "trusted". Call after `grant`: the key is known."""
        if not presented or not self._untrusted:
            return "trusted"
        digest = key_digest(presented)
        return "untrusted" if any(hmac.compare_digest(d, digest) for d in self._untrusted) else "trusted"
