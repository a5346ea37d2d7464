"""`tether view` and `tether export` in headless Chromium: scrub to a tick and check that the tree,
the blackboard panel and the camera frame show that tick of the trace; the exported file works
from a file:// URL; a killed run opens. Screenshots land in tests/artifacts/.

These tests are marked `browser`: without the system Chromium (`make install` installs it with
apt) they fail and say so; deselect them on purpose with `-m "not browser"`. The server's path
confinement is tested without a browser in test_viewer_server.py."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from playwright.sync_api import Page, sync_playwright
from typer.testing import CliRunner

from tests.replay.recorded import record_pick_place, statuses_at
from tether.cli.main import app
from tether.replay.trace import TRACE_NAME, read_trace
from tether.replay.viewer.server import Background

ARTIFACTS = Path(__file__).resolve().parents[1] / "artifacts"
CHROMIUM = "/usr/bin/chromium"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update"]


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory) -> Path:
    return record_pick_place(tmp_path_factory.mktemp("viewer") / "run", frame_every=5)[0]


@pytest.fixture(scope="module")
def browser():
    if not Path(CHROMIUM).exists():
        pytest.fail(f"the browser tests need the system Chromium at {CHROMIUM} (make install "
                    "installs it: apt-get install chromium); to leave them out on purpose, "
                    "run pytest -m 'not browser'", pytrace=False)
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield b
        b.close()


def open_page(browser, url: str) -> Page:
    page = browser.new_page(viewport={"width": 1500, "height": 950})
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(url)
    page.wait_for_selector('body[data-ready="1"]', timeout=20_000)
    assert not errors, errors
    return page


def scrub(page: Page, tick: int) -> None:
    """Drag the timeline to `tick`, then step with the arrow keys until it is shown."""
    box = page.locator("#timeline").bounding_box()
    last = page.evaluate("window.tether.T.ticks.length")
    page.mouse.click(box["x"] + (tick - 1) / (last - 1) * box["width"], box["y"] + 20)
    for _ in range(20):
        shown = int(page.locator("#tick-label").get_attribute("data-tick"))
        if shown == tick:
            return
        page.keyboard.press("ArrowRight" if shown < tick else "ArrowLeft")
    raise AssertionError(f"could not scrub to tick {tick}")


def check_tick(page: Page, records: list[dict], tick: int) -> None:
    expected = statuses_at(records)[tick]
    shown = page.evaluate(
        "Object.keys(window.tether.T.nodes).map(i => window.tether.shownStatus(+i))")
    assert shown == [expected[i] for i in range(len(shown))]
    bb = {}
    for r in records:
        if r["k"] == "tick" and r["t"] <= tick:
            bb.update(r.get("bb", {}))
    rows = page.locator("#bb-table tr")
    keys = rows.evaluate_all("rows => rows.map(r => [r.dataset.key, r.cells[1].textContent])")
    assert {k: json.loads(v) for k, v in keys if not v.endswith("…")} == {
        k: v for k, v in bb.items() if len(json.dumps(v, separators=(",", ":"))) <= 400}
    changed = {r.get_attribute("data-key") for r in page.locator("#bb-table tr.changed").all()}
    assert changed == set(next(r for r in records if r.get("t") == tick).get("bb", {}))
    framed = max(r["t"] for r in records
                 if r["k"] == "tick" and r.get("frames") and r["t"] <= tick)
    images = page.locator("#frame-list img")
    assert images.evaluate_all("els => els.map(e => e.dataset.tick)") == [str(framed)] * len(
        next(r for r in records if r.get("t") == framed)["frames"])
    page.wait_for_function("[...document.querySelectorAll('#frame-list img')].every("
                           "i => i.complete && i.naturalWidth === 128)")


def error_tick(records: list[dict]) -> int:
    return next(r["t"] for r in records if r["k"] == "tick"
                and any(e["kind"] == "error" for e in r.get("events", [])))


@pytest.mark.browser
def test_scrub_to_a_tick_shows_its_statuses_blackboard_and_frame(browser, run_dir):
    records = read_trace(run_dir)
    with Background(run_dir) as url:
        page = open_page(browser, url)
        k = error_tick(records)
        for tick in (k, k + 1, 7):
            scrub(page, tick)
            check_tick(page, records, tick)
        scrub(page, k)
        page.locator("#search").fill("lifted")
        page.evaluate("window.tether.select(window.tether.T.nodes.find("
                      "n => n.name.startsWith('check lifted')).id)")
        assert page.locator("#node-status").text_content() == "FAILURE"
        assert "EMPTY_GRASP" in page.locator("#tick-events").text_content()
        page.screenshot(path=str(ARTIFACTS / "viewer_failing_grasp.png"))
        page.close()


@pytest.mark.browser
def test_exported_html_replays_from_a_file_url(browser, run_dir, tmp_path):
    out = tmp_path / "run.html"
    result = CliRunner().invoke(app, ["export", str(run_dir), "-o", str(out)])
    assert result.exit_code == 0, result.output
    records = read_trace(run_dir)
    page = open_page(browser, out.as_uri())
    tick = error_tick(records) + 2
    scrub(page, tick)
    check_tick(page, records, tick)
    assert page.locator("#frame-list img").first.get_attribute("src").startswith("data:image/")
    page.screenshot(path=str(ARTIFACTS / "export_after_retry.png"))
    page.close()


@pytest.mark.browser
def test_a_killed_run_opens_in_the_viewer(browser, run_dir, tmp_path):
    killed = tmp_path / "killed"
    shutil.copytree(run_dir, killed)
    text = (killed / TRACE_NAME).read_text()
    lines = text.splitlines(keepends=True)
    (killed / TRACE_NAME).write_text("".join(lines[:40]) + lines[40][:25])  # torn, no end
    with Background(killed) as url:
        page = open_page(browser, url)
        assert page.evaluate("window.tether.T.ticks.length") == 38
        assert page.locator("#outcome").text_content() == "unfinished"
        page.close()


@pytest.mark.browser
def test_live_view_follows_new_ticks(browser, run_dir, tmp_path):
    growing = tmp_path / "growing"
    growing.mkdir()
    lines = (run_dir / TRACE_NAME).read_text().splitlines(keepends=True)
    (growing / TRACE_NAME).write_text("".join(lines[:12]))
    with Background(growing, live=True) as url:
        page = open_page(browser, url)
        assert page.locator("#tick-label").get_attribute("data-tick") == "10"
        with (growing / TRACE_NAME).open("a") as f:
            f.write("".join(lines[12:30]))
        page.wait_for_function("document.querySelector('#tick-label').dataset.tick === '28'")
        page.close()


def test_render_draws_a_tree_file(tmp_path):
    from tether.trees.compiler import LIBRARY

    if shutil.which("dot") is None:
        pytest.skip("needs graphviz (apt-get install graphviz)")
    out = tmp_path / "pick_place.svg"
    result = CliRunner().invoke(app, ["render", str(LIBRARY / "pick_place.yaml"), "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert "<svg" in out.read_text() and "grasp attempt" in out.read_text()


@pytest.mark.slow
@pytest.mark.browser
def test_a_libero_run_with_frames_replays_in_the_viewer(browser, tmp_path):
    from tether.replay.recorder import FrameSettings
    from tether.session.run import RunConfig, run
    from tether.session.session import SessionConfig
    from tether.trees.compiler import LIBRARY

    cameras = ("agentview", "robot0_eye_in_hand")
    record = run(RunConfig(LIBRARY / "pick_place.yaml", SessionConfig(
        "libero_goal/8", init_state=0, runs=tmp_path,
        frames=FrameSettings(cameras=cameras, every=20))))
    run_dir = Path(record.run_dir)
    records = read_trace(run_dir)
    assert records[-1]["k"] == "end" and records[-1]["success"] == record.result.success
    framed = [r for r in records if r["k"] == "tick" and r.get("frames")]
    assert framed and all(set(r["frames"]) == set(cameras) for r in framed)
    with Background(run_dir) as url:
        page = open_page(browser, url)
        marked = [r["t"] for r in records if r["k"] == "tick" and any(
            e["kind"] in ("failure", "error", "recovery") for e in r.get("events", []))]
        tick = marked[0] if marked else framed[len(framed) // 2]["t"]
        scrub(page, tick)
        check_tick(page, records, tick)
        assert page.locator("#frame-list img").count() == 2
        page.screenshot(path=str(ARTIFACTS / "viewer_libero.png"))
        page.close()


@pytest.mark.slow
@pytest.mark.browser
def test_a_camera_run_shows_what_perception_saw_beside_the_truth(browser, tmp_path):
    from tether.replay.recorder import FrameSettings
    from tether.session.run import RunConfig, run
    from tether.session.session import SessionConfig
    from tether.trees.compiler import LIBRARY

    record = run(RunConfig(LIBRARY / "pick_place.yaml", SessionConfig(
        "libero_spatial/0", init_state=1, runs=tmp_path, memory="none", perception="camera",
        frames=FrameSettings(cameras=("agentview",), every=20), budget=30)))
    run_dir = Path(record.run_dir)
    records = read_trace(run_dir)
    looked = [r for r in records if r["k"] == "tick" and any(
        e["kind"] == "localized" for e in r.get("events", []))]
    first = next(e for e in looked[0]["events"] if e["kind"] == "localized")
    errors = {name: o["error_cm"] for name, o in first["objects"].items()}
    assert set(errors) == {"akita_black_bowl_1", "akita_black_bowl_2", "cookies_1",
                           "glazed_rim_porcelain_ramekin_1", "plate_1"}
    assert max(errors.values()) < 2.0 and looked[0].get("frames")
    with Background(run_dir) as url:
        page = open_page(browser, url)
        scrub(page, looked[0]["t"])
        assert page.locator("#frame-list svg.perceived circle.estimate").count() == 5
        assert page.locator("#frame-list svg.perceived circle.truth").count() == 5
        assert "localized akita_black_bowl_1" in page.locator("#tick-events").inner_text()
        page.screenshot(path=str(ARTIFACTS / "viewer_camera_perception.png"))
        page.close()
