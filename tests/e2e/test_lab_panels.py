"""nbext's panels in real JupyterLab: they survive save and reopen, Cancel acts while the
cell blocks, and every text is readable in the Light, Dark and high-contrast themes.
"""

from __future__ import annotations

import pytest
from playwright.sync_api import Locator, expect

from .jupyter import JupyterLabServer
from .lab import LabPage
from .notebook_files import PANELS, STATIC_PANELS, write_notebook

pytestmark = [pytest.mark.e2e, pytest.mark.slow]


@pytest.fixture
def panels_notebook(lab_server: JupyterLabServer) -> str:
    write_notebook(lab_server.root_dir / "panels.ipynb", PANELS)
    return "panels.ipynb"


def save(lab: LabPage) -> None:
    lab.page.evaluate("() => window.jupyterapp.commands.execute('docmanager:save')")
    lab.page.wait_for_function(
        "() => !window.jupyterapp.shell.currentWidget.context.model.dirty", timeout=30_000
    )


def test_run_save_close_reopen_keeps_every_final_state(
    lab: LabPage, lab_server: JupyterLabServer, panels_notebook: str
) -> None:
    lab.open(panels_notebook).run_all(timeout_ms=180_000)
    assert lab.errors() == []
    expect(shown(lab, ".nbext-static")).to_have_count(STATIC_PANELS)
    save(lab)
    lab.page.evaluate("() => window.jupyterapp.commands.execute('application:close-all')")
    lab_server.shutdown_kernels()  # nothing of the run is left but the file

    lab.open(panels_notebook)  # a fresh page: no widget manager, no widget state
    expect(shown(lab, ".nbext-static")).to_have_count(STATIC_PANELS)
    for state in ("COMPLETED", "FAILED"):
        badge = shown(lab, f'.nbext-static .nbext-state[data-state="{state}"]').first
        expect(badge).to_be_visible()
    for cell, text in (
        ("stream-text", "every streamed word stays"),
        ("fail --no-raise", "a failure on purpose"),
        ("echo -o out", "hello from the echo job"),
    ):
        expect(lab.output(lab.cell_with(cell))).to_contain_text(text)
    expect(shown(lab, ".nbext-map-counts")).to_contain_text("5/5 · COMPLETED 5")
    expect(shown(lab, ".nbext-health-chart")).to_be_visible()
    assert "Error displaying widget" not in shown(lab, ".jp-Notebook").inner_text()
    lab.screenshot("panels-reopened")


VISIBLE = ".jp-NotebookPanel:not(.lm-mod-hidden)"
"""The notebook on show (JupyterLab restores the tabs of earlier tests, hidden)."""


def shown(lab: LabPage, selector: str) -> Locator:
    """``selector`` in the notebook on show only."""
    return lab.page.locator(f"{VISIBLE} {selector}")


def seconds_until(lab: LabPage, button: Locator, selector: str) -> float:
    """Click ``button``; seconds until ``selector`` is in the page (checked every frame)."""
    started = lab.page.evaluate("() => performance.now()")
    button.click()
    ended = lab.page.wait_for_function(
        "(selector) => document.querySelector(selector) ? performance.now() : null",
        arg=selector,
        polling="raf",
        timeout=30_000,
    ).json_value()
    return float(ended - started) / 1000


CANCEL = [
    "%load_ext nbext",
    '%%runpod_job sleep -o out\n{"seconds": 60}',
    "after = True",
]
CLICK_TO_CANCELLED_S = 1.0


@pytest.mark.parametrize("options", ["", "--stream", "--sync"])
def test_cancel_while_the_cell_blocks(
    lab: LabPage, lab_server: JupyterLabServer, options: str
) -> None:
    cells = [CANCEL[0], CANCEL[1].replace("-o out", f"-o out {options}".strip()), CANCEL[2]]
    write_notebook(lab_server.root_dir / "cancel.ipynb", cells)
    lab.open("cancel.ipynb")
    lab.page.evaluate("() => { window.jupyterapp.commands.execute('notebook:run-all-cells'); }")
    cell = lab.cell_with("%%runpod_job sleep")
    badge = lab.output(cell).locator('.nbext-state[data-state="IN_PROGRESS"]')
    expect(badge).to_be_visible(timeout=60_000)
    button = lab.button(cell, "Cancel")
    expect(button).to_be_enabled()
    # the run time counts up while the cell waits (at most ten redraws a second)
    timing = lab.output(cell).locator(".nbext-job-timing")
    before = timing.inner_text()
    lab.page.wait_for_timeout(400)
    assert timing.inner_text() != before, f"the run time stood still at {before!r}"
    lab.screenshot(f"cancel-before-click{options}")
    elapsed = seconds_until(
        lab, button, f'{VISIBLE} .nbext-static .nbext-state[data-state="CANCELLED"]'
    )
    print(f"click to CANCELLED{options and ' ' + options}: {elapsed:.3f} s")
    assert elapsed < CLICK_TO_CANCELLED_S, f"CANCELLED {elapsed:.2f} s after the click"
    lab.wait_until_idle()
    errors = lab.errors()
    assert len(errors) == 1 and errors[0].startswith("JobNotCompleted: job ")
    assert "ended CANCELLED" in errors[0]
    # Run All stopped at the cancelled job: the next cell never ran
    expect(lab.cell_with("after = True").locator(".jp-InputPrompt")).to_have_text("[ ]:")
    lab.screenshot(f"cancel-after-click{options}")


def test_cancel_stops_a_blocking_map(lab: LabPage, lab_server: JupyterLabServer) -> None:
    cells = [
        "%load_ext nbext",
        "naps = [{'seconds': 60} for _ in range(6)]\n%runpod map sleep naps --concurrency 2",
        "after = True",
    ]
    write_notebook(lab_server.root_dir / "cancel-map.ipynb", cells)
    lab.open("cancel-map.ipynb")
    lab.page.evaluate("() => { window.jupyterapp.commands.execute('notebook:run-all-cells'); }")
    cell = lab.cell_with("%runpod map sleep")
    button = lab.button(cell, "Cancel")
    expect(button).to_be_visible(timeout=60_000)
    expect(lab.output(cell).locator(".nbext-map-counts")).to_contain_text("0/6")
    elapsed = seconds_until(lab, button, f"{VISIBLE} .nbext-static.nbext-map-panel")
    print(f"click to a stopped map: {elapsed:.3f} s")
    assert elapsed < CLICK_TO_CANCELLED_S, f"the map stopped {elapsed:.2f} s after the click"
    lab.wait_until_idle()
    expect(lab.output(cell)).to_contain_text("cancelled: 0 of 6 finished")
    errors = lab.errors()
    assert len(errors) == 1 and "stopped after 0 of 6 jobs (cancelled)" in errors[0]
    expect(lab.cell_with("after = True").locator(".jp-InputPrompt")).to_have_text("[ ]:")


CONTRAST = """
(selector) => {
  const parse = (text) => {
    const m = text.match(/rgba?\\(([^)]+)\\)/);
    if (!m) return null;
    const p = m[1].split(/[ ,\\/]+/).filter(Boolean).map(Number);
    return {r: p[0], g: p[1], b: p[2], a: p.length > 3 ? p[3] : 1};
  };
  const over = (top, bottom) => ({
    r: top.r * top.a + bottom.r * (1 - top.a),
    g: top.g * top.a + bottom.g * (1 - top.a),
    b: top.b * top.a + bottom.b * (1 - top.a),
    a: 1,
  });
  const background = (el) => {
    const layers = [];
    for (let node = el; node && node.nodeType === 1; node = node.parentElement) {
      const c = parse(getComputedStyle(node).backgroundColor);
      if (c && c.a > 0) { layers.push(c); if (c.a >= 1) break; }
    }
    let colour = {r: 255, g: 255, b: 255, a: 1};
    const last = layers[layers.length - 1];
    if (!last || last.a < 1) {
      colour = parse(getComputedStyle(document.body).backgroundColor) || colour;
    }
    for (const layer of layers.reverse()) colour = over(layer, colour);
    return colour;
  };
  const lum = (c) => {
    const f = (v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; };
    return 0.2126 * f(c.r) + 0.7152 * f(c.g) + 0.0722 * f(c.b);
  };
  const ratio = (a, b) => {
    const [x, y] = [lum(a), lum(b)].sort((p, q) => q - p);
    return (x + 0.05) / (y + 0.05);
  };
  const texts = [], graphics = [];
  for (const panel of document.querySelectorAll(selector)) {
    const walker = document.createTreeWalker(panel, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      const el = node.parentElement;
      if (!node.textContent.trim() || !el.getClientRects().length) continue;
      const style = getComputedStyle(el);
      if (style.visibility === 'hidden' || style.display === 'none') continue;
      const svg = el instanceof SVGElement;
      let fg = parse(svg ? style.fill : style.color);
      const bg = background(svg ? el.closest('div') : el);
      fg = over(fg, bg);
      texts.push({text: node.textContent.trim().slice(0, 40), ratio: ratio(fg, bg)});
    }
    for (const el of panel.querySelectorAll('.nbext-state')) {
      const bg = background(el.parentElement);
      graphics.push({what: 'badge ' + el.dataset.state,
                     ratio: ratio(over(parse(getComputedStyle(el).borderTopColor), bg), bg)});
    }
    for (const el of panel.querySelectorAll('.nbext-map-bar [data-state]')) {
      const bg = background(el.parentElement.parentElement);
      graphics.push({what: 'bar ' + el.dataset.state,
                     ratio: ratio(over(parse(getComputedStyle(el).backgroundColor), bg), bg)});
    }
    const lines = panel.querySelectorAll('.nbext-health-chart :is(polyline, line)');
    for (const el of lines) {
      const bg = background(el.closest('div'));
      graphics.push({what: 'chart ' + (el.dataset.series || 'axis'),
                     ratio: ratio(over(parse(getComputedStyle(el).stroke), bg), bg)});
    }
  }
  return {texts, graphics};
}
"""
THEMES = ["JupyterLab Light", "JupyterLab Dark", "JupyterLab Dark High Contrast"]
PANEL_SELECTOR = ", ".join(
    f"{VISIBLE} {kind}" for kind in (".nbext-job-panel", ".nbext-map-panel", ".nbext-health-panel")
)


def test_every_text_in_the_panels_is_readable_in_each_theme(
    lab: LabPage, lab_server: JupyterLabServer
) -> None:
    # the finished panels, plus live ones (a running job and a health watch)
    cells = [
        *PANELS[:6],
        '%%runpod_job sleep --background\n{"seconds": 120}',
        "%runpod health echo --watch 0.2",
    ]
    write_notebook(lab_server.root_dir / "contrast.ipynb", cells)
    lab.open("contrast.ipynb").run_all(timeout_ms=180_000)
    expect(shown(lab, "svg.nbext-health-chart")).to_have_count(1, timeout=30_000)
    expect(shown(lab, '.nbext-job-panel .nbext-state[data-state="IN_PROGRESS"]')).to_be_visible()
    for theme in THEMES:
        lab.page.evaluate(
            "(theme) => window.jupyterapp.commands.execute('apputils:change-theme', {theme})",
            theme,
        )
        lab.page.wait_for_function(
            "(theme) => document.body.dataset.jpThemeName === theme", arg=theme
        )
        lab.page.wait_for_timeout(500)  # the theme's stylesheet applies
        measured = lab.page.evaluate(CONTRAST, PANEL_SELECTOR)
        texts, graphics = measured["texts"], measured["graphics"]
        print(
            f"{theme}: {len(texts)} texts, lowest {min(t['ratio'] for t in texts):.2f}:1; "
            f"{len(graphics)} graphics, lowest {min(g['ratio'] for g in graphics):.2f}:1"
        )
        assert len(texts) > 40 and len(graphics) >= 10, graphics
        low_text = [t for t in texts if t["ratio"] < 4.5]
        low_graphics = [g for g in graphics if g["ratio"] < 3.0]
        assert not low_text, (theme, low_text)
        assert not low_graphics, (theme, low_graphics)
        lab.screenshot(f"panels-{theme}")
