"""What a query says besides its words: the time it points at, the people it names and whose words
it asks for (pure).

Time expressions become a window that boosts turns and sessions of that time:
- absolute: "on 8 May, 2023", "May 8, 2023", "in May 2023", "in 2023";
- relative to `now` (the query's `as_of`, or the present): "yesterday", "today", "last week",
  "last month", "last year", "last May", "last Friday", "3 days ago", "two weeks ago", and a month
  without its year ("in March", "during June"): the latest such month up to `now`, this one included.
Expressions relative to another event ("two weeks after the race") name no date by themselves;
they are left to the words of the query.

Whose words: a question put by the user in the first person ("where do I keep my sneakers?") is
answered by what the user said, not by the assistant's long replies on the same topic; one about
the assistant's own words ("what did you recommend", "remind me of the ...") by what the assistant
said (`addressed_role`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta, timezone
from typing import Any, Iterable

from kg.core.models.turns import Role

MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august", "september",
          "october", "november", "december")
WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_NUMBERS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
            "eight": 8, "nine": 9, "ten": 10, "couple of": 2, "few": 3}
_M = r"(january|february|march|april|may|june|july|august|september|october|november|december|" \
     r"jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec)"
_DAY_MONTH_YEAR = re.compile(rf"\b(\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?{_M}\.?,?\s+(\d{{4}})\b", re.I)
_MONTH_DAY_YEAR = re.compile(rf"\b{_M}\.?\s+(\d{{1,2}})(?:st|nd|rd|th)?,?\s+(\d{{4}})\b", re.I)
_MONTH_YEAR = re.compile(rf"\b{_M}\.?,?\s+(?:of\s+)?(\d{{4}})\b", re.I)
_YEAR = re.compile(r"\b(?:in|during|of|since)\s+((?:19|20)\d{2})\b", re.I)
_AGO = re.compile(r"\b(\d+|a|an|one|two|three|four|five|six|seven|eight|nine|ten|couple of|few)\s+"
                  r"(day|week|month|year)s?\s+ago\b", re.I)
_LAST = re.compile(rf"\b(?:last|past|previous)\s+(week|month|year|weekend|{_M}|" + "|".join(WEEKDAYS) + r")\b", re.I)
# "in March", "during June": a month named without a day or year after it (those are absolute, above)
_IN_MONTH = re.compile(rf"\b(?:in|during)\s+{_M}\b(?!\.?,?\s+(?:of\s+)?\d)", re.I)
_YESTERDAY = re.compile(r"\byesterday\b", re.I)
_TODAY = re.compile(r"\b(?:today|tonight|this morning)\b", re.I)


@dataclass(frozen=True)
class TimeWindow:
    start: datetime
    end: datetime  # exclusive
    expression: str

    def near(self, ts: datetime, slack: timedelta) -> bool:
        return self.start - slack <= ts < self.end + slack


def _month(name: str) -> int:
    name = name.lower()
    return next(i for i, m in enumerate(MONTHS, start=1) if m.startswith(name[:3]))


def _at(d: date) -> datetime:
    return datetime.combine(d, time(), tzinfo=timezone.utc)


def _latest_month(today: date, month: int, text: str, this_one: bool) -> TimeWindow:
    """The latest `month` before `today`'s month ("last May"), or up to it included (`this_one`: "in May")."""
    past = month < today.month or (this_one and month == today.month)
    return _month_window(today.year if past else today.year - 1, month, text)


def _month_window(year: int, month: int, text: str) -> TimeWindow:
    end = date(year + 1, 1, 1) if month == 12 else date(year, month + 1, 1)
    return TimeWindow(_at(date(year, month, 1)), _at(end), text)


def time_window(query: str, now: datetime) -> TimeWindow | None:
    """The first time expression of `query` as a UTC window, or None."""
    for pattern, order in ((_DAY_MONTH_YEAR, "dmy"), (_MONTH_DAY_YEAR, "mdy")):
        m = pattern.search(query)
        if m:
            day, month, year = (m.group(1), m.group(2), m.group(3)) if order == "dmy" else \
                (m.group(2), m.group(1), m.group(3))
            try:
                start = _at(date(int(year), _month(month), int(day)))
            except ValueError:
                continue
            return TimeWindow(start, start + timedelta(days=1), m.group(0))
    m = _MONTH_YEAR.search(query)
    if m:
        return _month_window(int(m.group(2)), _month(m.group(1)), m.group(0))
    m = _YEAR.search(query)
    if m:
        year = int(m.group(1))
        return TimeWindow(_at(date(year, 1, 1)), _at(date(year + 1, 1, 1)), m.group(0))
    return _relative(query, now)


def _relative(query: str, now: datetime) -> TimeWindow | None:
    today = now.astimezone(timezone.utc).date()
    if m := _YESTERDAY.search(query):
        return TimeWindow(_at(today - timedelta(days=1)), _at(today), m.group(0))
    if m := _TODAY.search(query):
        return TimeWindow(_at(today), _at(today + timedelta(days=1)), m.group(0))
    if m := _AGO.search(query):
        n = int(m.group(1)) if m.group(1).isdigit() else _NUMBERS[m.group(1).lower()]
        days = {"day": 1, "week": 7, "month": 30, "year": 365}[m.group(2).lower()] * n
        centre = today - timedelta(days=days)
        spread = max(1, days // 7)
        return TimeWindow(_at(centre - timedelta(days=spread)), _at(centre + timedelta(days=spread + 1)), m.group(0))
    if m := _LAST.search(query):
        unit = m.group(1).lower()
        if unit in ("week", "weekend"):
            start = today - timedelta(days=today.weekday() + 7)
            return TimeWindow(_at(start), _at(start + timedelta(days=7)), m.group(0))
        if unit == "month":
            first = today.replace(day=1)
            prev = (first - timedelta(days=1)).replace(day=1)
            return TimeWindow(_at(prev), _at(first), m.group(0))
        if unit == "year":
            return TimeWindow(_at(date(today.year - 1, 1, 1)), _at(date(today.year, 1, 1)), m.group(0))
        if unit in WEEKDAYS:
            back = (today.weekday() - WEEKDAYS.index(unit)) % 7 or 7
            day = today - timedelta(days=back)
            return TimeWindow(_at(day), _at(day + timedelta(days=1)), m.group(0))
        return _latest_month(today, _month(unit), m.group(0), this_one=False)
    if m := _IN_MONTH.search(query):
        return _latest_month(today, _month(m.group(1)), m.group(0), this_one=True)
    return None


_FIRST_PERSON = re.compile(r"\b(?:i|me|my|mine|myself|i'm|i've|i'd|i'll)\b", re.I)
_SAID = ("said|told|recommended|suggested|mentioned|gave|provided|listed|shared|described|explained|wrote|made|"
         "created|proposed|came up with")
_SAY = ("say|tell|recommend|suggest|mention|give|provide|list|share|describe|explain|write|make|create|propose|"
        "come up with")
# "you recommended", "did you suggest": the assistant's past words; a request ("can you suggest ...")
# is not one (its answer is whatever the user said about themselves)
_ASSISTANTS_WORDS = re.compile(
    rf"\byou\b[\w\s,'’-]{{0,40}}?\b(?:{_SAID})\b|\bdid you (?:\w+ )?(?:{_SAY})\b"
    r"|\byour (?:answer|reply|response|suggestion|recommendation|advice|list)s?\b|\bremind me\b", re.I)


def addressed_role(query: str) -> Role | None:
    """Whose turns answer `query`: "assistant" when it asks for what the assistant said ("you
    recommended", "remind me"), "user" when it speaks in the first person, else None (a question
    about third parties, as an agent asks on the user's behalf)."""
    if _ASSISTANTS_WORDS.search(query):
        return "assistant"
    return "user" if _FIRST_PERSON.search(query) else None


# Question and function words: in a small namespace a turn matching only "did" or "we" would
# otherwise take a high BM25 rank. Month names ("may") are kept.
QUESTION_WORDS = frozenset("""
what which who whom whose when where why how did do does doing done was were is are am be been being has have
had having can could would should shall might must i me my mine we us our ours you your yours he him his she
her hers they them their theirs it its a an the of to in on for about ever any some there this that these those
""".split())
_TERM = re.compile(r"[\w'’-]+")


def content_terms(query: str) -> str:
    """The query without question and function words (all of it when nothing else is left)."""
    kept = [w for w in _TERM.findall(query) if w.lower().strip("'’") not in QUESTION_WORDS]
    return " ".join(kept) if kept else query


def named(query: str, names: Iterable[str]) -> set[str]:
    """The names (speakers, entities) that `query` mentions as whole words, case-insensitively."""
    found = set()
    for name in names:
        if name and re.search(r"(?<!\w)" + re.escape(name) + r"(?!\w)", query, re.I):
            found.add(name)
    return found


def named_speakers(query: str, candidates: Iterable[Any]) -> set[str]:
    """Speakers of the candidates (turns with a `speaker`) the query names; naming every speaker of
    them tells nothing."""
    speakers = {c.speaker for c in candidates if c.speaker}
    found = named(query, speakers)
    return found if found != speakers else set()
