"""Neo4j Browser as the README tells a person to use it, in headless Chromium: connect with the
managed server's password, drop `cypher/browser/style.grass` onto the window, paste each saved query
with its inputs line edited, run it, and read the rows (table view) and the node captions (SVG).

Chromium is Debian's package (`apt-get install chromium`); Playwright only drives it, so no browser
is downloaded. Without /usr/bin/chromium the tests skip."""

from __future__ import annotations

import re
from datetime import timedelta
from pathlib import Path
from typing import Any, AsyncIterator

import pytest
from test_browser_queries import BROWSER, INPUTS, T0, seed

from kg import AsyncMemory
from kg.core.store.store import resolve_connection

CHROMIUM = Path("/usr/bin/chromium")
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]
if not CHROMIUM.exists():
    pytest.skip(f"{CHROMIUM} is absent: install Debian's chromium (apt-get install chromium) to drive "
                "Neo4j Browser", allow_module_level=True)
async_api = pytest.importorskip("playwright.async_api", reason="the dev extra's playwright package drives Chromium")

DROP_FILE = """([name, text]) => {
    const data = new DataTransfer();
    data.items.add(new File([text], name));
    const target = document.querySelector('[data-testid="main"]') || document.body;
    for (const kind of ['dragenter', 'dragover', 'drop'])
        target.dispatchEvent(new DragEvent(kind, {dataTransfer: data, bubbles: true, cancelable: true}));
}"""


class BrowserPage:
    """One Neo4j Browser tab, used through its UI."""

    def __init__(self, page: Any, shots: Path) -> None:
        self.page = page
        self.shots = shots  # a screenshot after each run, to look at when a test fails
        self.runs = 0

    async def connect(self, url: str, bolt: str, user: str, password: str) -> None:
        await self.page.goto(f"{url}?dbms={bolt.replace('://', f'://{user}@')}&preselectAuthMethod=NATIVE")
        await self.page.locator('[data-testid="password"]').fill(password)
        await self.page.locator('[data-testid="connect"]').click()
        await self.page.locator('[data-testid="frameCommand"]', has_text=":server connect").first.wait_for()
        await self.page.get_by_text("You are connected as user").first.wait_for(timeout=20_000)

    async def drop(self, name: str, text: str) -> None:
        await self.page.evaluate(DROP_FILE, [name, text])

    async def paste_and_run(self, text: str) -> Any:
        """Paste into the editor as a person does (no typing: the editor would close brackets) and run."""
        frames = await self.page.locator('[data-testid="frame"]').count()
        await self.page.evaluate("text => navigator.clipboard.writeText(text)", text)
        await self.page.locator('[data-testid="activeEditor"]').first.click()
        await self.page.keyboard.press("Control+V")
        await self.page.locator('[data-testid="editor-Run"]').first.click()
        await self.page.wait_for_function(
            "n => document.querySelectorAll('[data-testid=\"frame\"]').length > n", arg=frames)
        frame = self.page.locator('[data-testid="frame"]').first  # the newest frame is on top
        self.runs += 1
        try:
            await frame.locator('[data-testid="frameStatusbar"]').wait_for(timeout=30_000)
        except async_api.TimeoutError:  # say what the frame shows instead (an error, a spinner)
            await self.page.screenshot(path=str(self.shots / f"run-{self.runs}-no-status.png"))
            shown = " ".join((await frame.inner_text()).split())[-500:]  # past the query
            raise AssertionError(f"run {self.runs}: no status bar in 30 s; the frame ends: {shown!r} "
                                 f"(screenshot in {self.shots})") from None
        await self.page.screenshot(path=str(self.shots / f"run-{self.runs}.png"))
        return frame

    async def captions(self, frame: Any) -> list[str]:
        """The caption of every node drawn in the frame's graph view (its lines joined)."""
        await frame.locator('[data-testid="cypherFrameSidebarVisualization"]').click()  # Browser keeps the last view
        await frame.locator("svg g.node").first.wait_for()
        nodes = frame.locator("svg g.node")
        return [" ".join(t.strip() for t in await nodes.nth(i).locator("text").all_text_contents() if t.strip())
                for i in range(await nodes.count())]

    async def table(self, frame: Any) -> str:
        await frame.locator('[data-testid="cypherFrameSidebarTable"]').click()
        return await frame.locator("table").first.inner_text()


@pytest.fixture
async def browser_page(memory: AsyncMemory, tmp_path: Path) -> AsyncIterator[BrowserPage]:
    conn = resolve_connection(memory.settings)
    if not conn.managed:
        pytest.skip("the Browser test drives the managed local server's Browser")
    local = memory.settings.neo4j.local
    async with async_api.async_playwright() as pw:
        chromium = await pw.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        context = await chromium.new_context(viewport={"width": 1400, "height": 1000},
                                             permissions=["clipboard-read", "clipboard-write"])
        page = BrowserPage(await context.new_page(), tmp_path)
        try:
            await page.connect(f"http://127.0.0.1:{local.http_port}/browser/", conn.uri, conn.user, conn.password or "")
            yield page
        finally:
            await chromium.close()


def edited(name: str, namespace: str) -> str:
    """The saved query with its inputs line edited as the README says (namespace, session s1)."""
    text = (BROWSER / name).read_text("utf-8")
    line = INPUTS.search(text)[0]
    new = re.sub(r"'[^']*' AS namespace|null AS namespace", f"'{namespace}' AS namespace", line)
    new = new.replace("'s-20250203T090000000Z' AS session_id", "'s1' AS session_id")
    return text.replace(line, new)


async def test_style_and_saved_queries_in_neo4j_browser(memory: AsyncMemory, namespace: str,
                                                        browser_page: BrowserPage) -> None:
    await seed(memory, namespace)
    await memory.close_session(namespace, "s1", now=T0 + timedelta(hours=2))
    await memory.enqueue_job("maintain_corrections", namespace, namespace)
    await browser_page.drop("style.grass", (BROWSER / "style.grass").read_text("utf-8"))

    frame = await browser_page.paste_and_run(edited("entity_facts_over_time.cypher", namespace))
    captions = await browser_page.captions(frame)
    assert {"lives_in Porto", "lives_in Lisbon", "works_at Acme", "Maya", "Acme"} <= set(captions), captions
    assert not [c for c in captions if re.fullmatch(r"\d*", c)], f"bare number captions: {captions}"
    rows = await browser_page.table(frame)
    assert "Lisbon" in rows and "current" in rows and "ended" in rows

    frame = await browser_page.paste_and_run(edited("session_timeline.cypher", namespace))
    captions = await browser_page.captions(frame)
    # Browser cuts a long caption to the circle: the start of "{idx} {role} {text}", "{status} {rule_text}"
    assert any(c.startswith("0 user I live") for c in captions), captions
    assert any(c.startswith("correction Always") for c in captions), captions
    assert "lives_in Porto" in captions and "lives_in Lisbon" in captions, captions
    assert "lives_in = Porto" in await browser_page.table(frame)

    expected = {"namespace_overview.cypher": "Turn", "supersession_chains.cypher": "Lisbon from 2024-06-01",
                "rule_graduation.cypher": "British English", "session_summaries.cypher": "Session",
                "jobs.cypher": "maintain_corrections"}
    for name, text in expected.items():
        frame = await browser_page.paste_and_run(edited(name, namespace))
        assert text in await browser_page.table(frame), name

    frame = await browser_page.paste_and_run(edited("duplicate_alias_clusters.cypher", namespace))
    # ran, and found nothing: Maya and maya are one entity (waited for: a loaded machine renders late)
    await frame.get_by_text(re.compile("no changes, no records", re.I)).first.wait_for(timeout=30_000)
