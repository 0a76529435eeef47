"""Identifying attributes: normalized so that equal values mean the same entity."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from urllib.parse import urlsplit

from .names import fold, normalize_name

_EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")
_NAME_LOCAL_PART = re.compile(r"^([a-z]{2,})[._-]([a-z]{2,})$")


def normalize_email(value: str) -> str | None:
    value = value.strip().lower()
    if value.startswith("mailto:"):
        value = value[len("mailto:") :]
    return value if _EMAIL.match(value) else None


def normalize_phone(value: str, min_digits: int = 7) -> str | None:
    """Digits only; a leading 00 means "+"; too few digits is not a phone number."""
    digits = re.sub(r"\D", "", value)
    if value.strip().startswith("00"):
        digits = digits[2:]
    return digits if len(digits) >= min_digits else None


def normalize_order_id(value: str) -> str | None:
    """Case and separators dropped, and a word prefix like "order no." ("#A-1001" -> a1001)."""
    tokens = [t for t in normalize_name(value).split() if t not in {"order", "no", "nr", "number", "ord"}]
    joined = "".join(tokens)
    return joined or None


def normalize_domain(value: str) -> str | None:
    """Host of a URL or a bare domain, without "www." ("https://www.Acme.com/x" -> acme.com)."""
    value = value.strip().lower()
    if "@" in value:
        value = value.rsplit("@", 1)[1]
    host = urlsplit(value if "//" in value else "//" + value).hostname or ""
    host = host.removeprefix("www.")
    return host if "." in host else None


_NORMALIZERS = {
    "email": normalize_email,
    "phone": normalize_phone,
    "order_id": normalize_order_id,
    "domain": normalize_domain,
    "url": normalize_domain,
    "website": normalize_domain,
    # The speaker label a caller gives turns ("Dana"): within a namespace, one participant.
    "speaker": lambda value: normalize_name(value) or None,
}
# url/website name the same thing a domain does.
_KIND = {"url": "domain", "website": "domain"}


def identifiers(attributes: Mapping[str, object], kinds: Iterable[str] | None = None) -> dict[str, str]:
    """The identifying attributes of a mention, normalized, keyed by kind."""
    wanted = set(kinds) if kinds is not None else set(_NORMALIZERS)
    out: dict[str, str] = {}
    for key, raw in attributes.items():
        name = key.lower()
        if name not in wanted or name not in _NORMALIZERS or raw is None:
            continue
        value = _NORMALIZERS[name](str(raw))
        if value:
            out[_KIND.get(name, name)] = value
    return out


def qualifiers(attributes: Mapping[str, object], kinds: Iterable[str]) -> dict[str, str]:
    """Attributes that cannot identify but can tell apart (a place's country)."""
    wanted = {k.lower() for k in kinds}
    return {k.lower(): normalize_name(str(v)) for k, v in attributes.items() if k.lower() in wanted and v}


def name_from_email(email: str) -> tuple[str, str] | None:
    """("jane", "doe") from jane.doe@example.com; None when the local part is not first.last."""
    match = _NAME_LOCAL_PART.match(fold(email.split("@", 1)[0]))
    return (match.group(1), match.group(2)) if match else None
