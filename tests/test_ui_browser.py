"""`rbdspy ui` seen in a real browser: headless Chromium (Debian's `chromium`, driven by
Playwright) against `rbdspy ui` on a tracking store that rbdspy's own code filled with scripted
LMs: a GEPA compile of the judge, an eval of the compiled judge with its confusion-matrix PNG, a
`rbdspy bench` smoke run on real TextWorld-Express games (a parent run with a child run per arm)
and one MaTTS call traced by DSPy autologging. The tests assert what a user must see there: the
run names and metrics, the PNG itself, the arms under their bench run, the trace's spans.

Screenshots go to each test's tmp_path; `RBDSPY_SCREENSHOTS_DIR=docs/img` also writes the two
that the docs show (ui-runs.png, ui-trace.png). Skipped where Chromium, Playwright, Java or
TextWorld-Express is missing; CI installs them all.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import socket
import struct
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import mlflow
import pytest

CHROMIUM = os.environ.get("RBDSPY_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
if not Path(CHROMIUM).is_file():
    pytest.skip("Chromium is not installed (apt-get install chromium)", allow_module_level=True)
if shutil.which("java") is None:
    pytest.skip("Java is not installed (the bench run plays TextWorld-Express)", allow_module_level=True)
pytest.importorskip("textworld_express", reason="the bench run plays TextWorld-Express (the `envs` extra)")
playwright_api = pytest.importorskip("playwright.sync_api", reason="Playwright is not installed (the `dev` extra)")
expect, sync_playwright = playwright_api.expect, playwright_api.sync_playwright

SCREENSHOTS_ENV = "RBDSPY_SCREENSHOTS_DIR"
VIEWPORT = {"width": 1280, "height": 800}
SERVER_START_S = 180  # MLflow's server starts slowly on two busy cores
# The UI is a React app: every step waits for what it needs to see, never for a fixed time.
expect.set_options(timeout=30_000)

MATTS_TASK = "how many inches in three feet"
MATTS_K = 3
# The spans a MaTTS call must show: the bank's modules, once per rollout where they are per rollout.
MATTS_SPANS = {
    "MaTTS.forward": 1,
    "MemoryRetriever.forward": 1,
    "Agent.forward": MATTS_K,
    "ProbabilityJudge.forward": MATTS_K,  # the default judge, named by its design's class
    "TrajectorySelector.forward": 1,
    "ContrastiveDistiller.forward": 1,
}
BENCH_ARMS = ["no-memory", "reasoningbank"]
# Keep MLflow's first-visit popovers (the assistant panel, the issue-detection hint) out of the way.
QUIET_UI = """
for (const [key, value] of [
  ["mlflow.assistant.panelOpen_v1", "false"],
  ["mlflow.assistant.fab.autoOpenedOnFirstLoad_v1", "true"],
  ["mlflow.detectIssues.guidanceShown_v1", "true"],
]) localStorage.setItem(key, value);
"""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _helpers_on_path() -> None:
    """The scripted LMs and data of the compile, bench and MaTTS tests are reused here."""
    tests = Path(__file__).resolve().parent
    for folder in ("optimizers", "bench", "scaling"):
        if str(tests / folder) not in sys.path:
            sys.path.insert(0, str(tests / folder))


def _setup_experiments() -> dict[str, str]:
    """Creates the two experiments (and so the store's schema) before the server opens the store."""
    from rbdspy import tracking

    ids = {}
    for name in ("rbdspy", "rbdspy-bench"):
        tracking.setup(name, autolog=False)
        ids[name] = mlflow.get_experiment_by_name(name).experiment_id
    return ids


def _build_store(root: Path) -> dict[str, str]:
    """Fills the store the way a user's commands would, with scripted LMs; returns the run ids."""
    import dspy
    from rich.console import Console

    _helpers_on_path()
    dspy.configure_cache(enable_disk_cache=False, enable_memory_cache=False)  # as in every test
    from bench_testing import scripted_lm as bench_lm
    from compile_testing import records, scripted_reflection_lm
    from compile_testing import scripted_lm as compile_lm
    from matts_testing import Agent, RolloutLM, lessons, script

    from rbdspy import MaTTS, MemoryStore, ReasoningBank, tracking
    from rbdspy.bench import run_bench
    from rbdspy.datasets.dataset import write_records
    from rbdspy.memory.embedders import HashEmbedder
    from rbdspy.optimizers import compile_program, evaluate_program

    train, dev = root / "data" / "chest-train.jsonl", root / "data" / "chest-dev.jsonl"
    write_records(train, records(12, "train"))
    write_records(dev, records(6, "dev", start=100))

    # `rbdspy compile --target judge --optimizer gepa`, then `rbdspy eval` of what it saved.
    compiled = compile_program(
        "judge",
        "gepa",
        [train],
        [dev],
        out_dir=root / "compiled",
        budget=12,
        lm=compile_lm(),
        reflection_lm=scripted_reflection_lm(),
        log_model=False,
        display_progress=False,
    )
    _, eval_id = evaluate_program("judge", [dev], compiled=root / "compiled", lm=compile_lm(), display_progress=False)

    # `rbdspy bench --smoke --arms no-memory,reasoningbank`: one parent run, a child run per arm.
    bench = run_bench(
        bench_lm(),
        HashEmbedder(dim=64),
        root / "bench-run",
        arms=",".join(BENCH_ARMS),
        smoke=True,
        lm_name="dummy",
        console=Console(quiet=True),
        n_resamples=200,
    )

    # One parallel MaTTS call with DSPy autologging on: one trace, inside a run of its own. The
    # run opens first: dspy.context copies the callbacks it finds, so autolog must be on by then.
    lm = RolloutLM(
        script(select={"rationale": "attempt 1 is right", "best_index": 1}, contrast=lessons("Check units")),
        {0: "wrong", 1: "right", 2: "wrong"},
    )
    with (
        MemoryStore(root / "bank", embedder=HashEmbedder(dim=64)) as store,
        tracking.run("matts-parallel", autolog=True) as matts_run,
        dspy.context(lm=lm),
    ):
        MaTTS(ReasoningBank(agent=Agent(), store=store), k=MATTS_K, mode="parallel")(task=MATTS_TASK)
    mlflow.flush_trace_async_logging()
    mlflow.dspy.autolog(disable=True, silent=True)
    return {
        "compile": compiled.run_id,
        "eval": eval_id,
        "bench": bench["mlflow_run_id"],
        "matts": matts_run.info.run_id,
    }


def _start_ui(root: Path, uri: str, port: int, log) -> subprocess.Popen:
    """`rbdspy ui` as a user starts it, offline (any attempt to reach the network fails fast)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("LITELLM")}
    env.update(HTTP_PROXY="http://127.0.0.1:9", HTTPS_PROXY="http://127.0.0.1:9", NO_PROXY="127.0.0.1,localhost")
    env["MLFLOW_TRACKING_URI"] = uri
    # One tab needs one worker, and no page here runs a server job (scheduled scorers): MLflow's
    # default four workers and eight job-runner processes would triple the start on two cores.
    env.update(MLFLOW_WORKERS="1", MLFLOW_SERVER_ENABLE_JOB_EXECUTION="false")
    return subprocess.Popen(
        [sys.executable, "-m", "rbdspy.cli", "ui", "--port", str(port)],
        env=env,
        cwd=root,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )


def _wait_for_http_200(server: subprocess.Popen, url: str, log_path: Path) -> None:
    deadline = time.monotonic() + SERVER_START_S
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(url, timeout=5) as response:
                if response.status == 200:
                    return
        except OSError:
            if server.poll() is not None:
                pytest.fail(f"rbdspy ui exited ({server.returncode}):\n{log_path.read_text()[-3000:]}")
            time.sleep(1)
    pytest.fail(f"rbdspy ui did not answer within {SERVER_START_S} s:\n{log_path.read_text()[-3000:]}")


def _stop(server: subprocess.Popen) -> None:
    try:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=30)
    except subprocess.TimeoutExpired:
        os.killpg(server.pid, signal.SIGKILL)
        server.wait(timeout=30)
    except ProcessLookupError:
        pass


@pytest.fixture(scope="module")
def ui(tmp_path_factory):
    """The store, `rbdspy ui` on it (started first: it takes longer than the runs) and a browser."""
    import copy
    import importlib

    dspy_settings = importlib.import_module("dspy.dsp.utils.settings")  # the module, not its `settings`
    root = tmp_path_factory.mktemp("ui-store")
    uri = f"sqlite:///{root / 'mlflow.db'}"
    old_uri, old_dspy = mlflow.get_tracking_uri(), copy.copy(dspy_settings.main_thread_config)
    log_path = root / "rbdspy-ui.log"
    server = None
    with pytest.MonkeyPatch.context() as patch, open(log_path, "wb") as log:
        patch.setenv("MLFLOW_TRACKING_URI", uri)
        patch.setenv("RBDSPY_MLFLOW_AUTOLOG", "0")  # the MaTTS run turns it on for itself
        # mlflow.set_experiment leaves the experiment in the environment and in the module: put both back.
        patch.delenv("MLFLOW_EXPERIMENT_ID", raising=False)
        patch.setattr(mlflow.tracking.fluent, "_active_experiment_id", mlflow.tracking.fluent._active_experiment_id)
        try:
            with pytest.MonkeyPatch.context() as cwd:
                cwd.chdir(root)  # nothing the runs write lands in the caller's directory
                experiments = _setup_experiments()
                port = _free_port()
                server = _start_ui(root, uri, port, log)
                runs = _build_store(root)
            client = mlflow.MlflowClient(uri)
            (trace,) = client.search_traces(locations=[experiments["rbdspy"]])
            store = {
                "experiments": experiments,
                "runs": runs,
                "eval": client.get_run(runs["eval"]),
                "trace": client.get_trace(trace.info.trace_id),
            }
            base = f"http://127.0.0.1:{port}"
            _wait_for_http_200(server, base + "/", log_path)
            with sync_playwright() as playwright:
                browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True)
                try:
                    yield {"base": base, "browser": browser, **store}
                finally:
                    browser.close()
        finally:
            if server is not None:
                _stop(server)
            mlflow.dspy.autolog(disable=True, silent=True)
            mlflow.set_tracking_uri(old_uri)
            dspy_settings.main_thread_config.clear()
            dspy_settings.main_thread_config.update(old_dspy)


@pytest.fixture(scope="module")
def tab(ui):
    """One browser tab for the module, on 127.0.0.1 only: a request for anything else is refused
    and recorded. Shared, so the app loads once and the tests move through it as a user would."""
    context = ui["browser"].new_context(viewport=VIEWPORT)
    context.add_init_script(QUIET_UI)
    outside = []

    def local_only(route):
        if route.request.url.startswith((ui["base"], "data:", "blob:")):
            route.continue_()
        else:
            outside.append(route.request.url)
            route.abort()

    context.route("**/*", local_only)
    page = context.new_page()
    # A hint popover that slipped past QUIET_UI would block clicks: dismiss it whenever it shows.
    page.add_locator_handler(page.get_by_role("button", name="Got it"), lambda button: button.click())
    yield page, outside
    context.close()


@pytest.fixture
def page(tab):
    page, outside = tab
    yield page
    assert not outside, f"the UI asked for something outside 127.0.0.1: {outside}"


def _shot(page, tmp_path: Path, name: str, docs: bool = False) -> Path:
    """Screenshots the tab (the pointer parked where it hovers nothing) into tmp_path and, for the
    docs' two, into $RBDSPY_SCREENSHOTS_DIR as well."""
    page.mouse.move(VIEWPORT["width"] // 2, VIEWPORT["height"] - 80)
    path = tmp_path / f"ui-{name}.png"
    page.screenshot(path=path)
    if docs and os.environ.get(SCREENSHOTS_ENV):
        target = Path(os.environ[SCREENSHOTS_ENV]).resolve()
        target.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, target / path.name)
    return path


def _runs_page(ui, experiment: str) -> str:
    # The "Model training" side of the UI: compile, eval and bench runs are runs, not agent sessions.
    return f"{ui['base']}/#/experiments/{ui['experiments'][experiment]}/runs?workflowType=machine_learning"


def _grid_cell(page, run_name: str, column: str):
    """One cell of the runs table: the grid keeps the run-name column and the others in separate
    row elements, joined by their row index."""
    name_row = page.locator("[role=row]", has=page.get_by_role("link", name=run_name, exact=True))
    index = name_row.first.get_attribute("row-index")
    return page.locator(f"[role=row][row-index='{index}'] [role=gridcell][col-id='{column}']")


def test_the_runs_list_names_every_run_with_its_metrics(ui, page, tmp_path):
    page.goto(_runs_page(ui, "rbdspy"))
    for name, kind in (("compile-judge-gepa", "compile"), ("eval-judge", "eval"), ("matts-parallel", "matts")):
        link = page.get_by_role("link", name=name, exact=True)
        expect(link).to_be_visible()
        expect(link).to_have_attribute("href", re.compile(f"/runs/{ui['runs'][kind]}$"))
    expect(page.get_by_text("3 matching runs")).to_be_visible()

    # Show what tells the runs apart: their kind, target and dev/eval accuracy.
    page.get_by_role("button", name="Columns").click()
    picker = page.get_by_role("dialog").last
    for column in ("Dataset", "Source", "Models", "rbdspy.kind", "target", "dev_after_accuracy", "eval_accuracy"):
        picker.get_by_text(column, exact=True).click()
    page.keyboard.press("Escape")
    # Widen the longest header to its text (a double click on the grid's resize handle).
    page.locator(".ag-header-cell[col-id='metrics.`dev_after_accuracy`'] .ag-header-cell-resize").dblclick()
    expect(_grid_cell(page, "compile-judge-gepa", "tags.`rbdspy.kind`")).to_have_text("compile")
    expect(_grid_cell(page, "compile-judge-gepa", "metrics.`dev_after_accuracy`")).to_have_text("1")
    expect(_grid_cell(page, "eval-judge", "tags.`rbdspy.kind`")).to_have_text("eval")
    expect(_grid_cell(page, "eval-judge", "params.`target`")).to_have_text("judge")
    expect(_grid_cell(page, "eval-judge", "metrics.`eval_accuracy`")).to_have_text("1")
    _shot(page, tmp_path, "runs", docs=True)


def test_the_eval_run_shows_its_metrics_and_its_confusion_matrix_png(ui, page, tmp_path):
    run = ui["eval"]
    page.goto(_runs_page(ui, "rbdspy"))
    page.get_by_role("link", name="eval-judge", exact=True).click()
    expect(page.get_by_text(f"Metrics ({len(run.data.metrics)})")).to_be_visible()
    for key, value in run.data.metrics.items():
        if key.startswith("eval_") or key == "lm_calls":  # 0, 0.5, 1 and 6: shown as written
            row = page.get_by_role("row").filter(has=page.get_by_role("cell", name=key, exact=True))
            expect(row).to_contain_text(f"{value:g}")
    expect(page.get_by_role("row").filter(has=page.get_by_role("cell", name="target", exact=True))).to_contain_text(
        "judge"
    )
    _shot(page, tmp_path, "eval-run")

    # The PNG the eval logged, decoded by the browser at its own size.
    png = Path(mlflow.artifacts.download_artifacts(run.info.artifact_uri + "/eval/eval_confusion.png"))
    width, height = struct.unpack(">II", png.read_bytes()[16:24])
    page.get_by_role("tab", name="Artifacts").click()
    page.get_by_text("eval", exact=True).first.click()
    page.get_by_text("eval_confusion.png", exact=True).first.click()
    shown = page.get_by_role("img", name="eval/eval_confusion.png", exact=True)
    expect(shown).to_be_visible()
    page.wait_for_function("(img) => img.complete && img.naturalWidth > 0", arg=shown.element_handle())
    assert shown.evaluate("(img) => [img.naturalWidth, img.naturalHeight]") == [width, height]
    _shot(page, tmp_path, "eval-confusion")


def test_the_bench_run_holds_a_child_run_per_arm(ui, page, tmp_path):
    page.goto(_runs_page(ui, "rbdspy-bench"))
    parent = page.get_by_role("link", name="bench-twx-bench-run", exact=True)
    expect(parent).to_be_visible()
    expect(page.get_by_text(f"{1 + len(BENCH_ARMS)} matching runs")).to_be_visible()
    # Children are folded under their parent until it is expanded.
    page.locator("[role=gridcell]", has=parent).get_by_role("button").first.click()
    for arm in BENCH_ARMS:
        expect(page.get_by_role("link", name=arm, exact=True)).to_be_visible()
    _shot(page, tmp_path, "bench-runs")

    parent.click()
    children = page.get_by_text("Child runs").locator("xpath=..")
    for arm in BENCH_ARMS:
        expect(children.get_by_role("link", name=arm, exact=True)).to_be_visible()
    expect(page.get_by_role("cell", name="reasoningbank.success_rate_measured", exact=True)).to_be_visible()
    expect(page.get_by_role("cell", name="command", exact=True)).to_be_visible()

    page.get_by_role("link", name="reasoningbank", exact=True).first.click()
    expect(page.get_by_role("cell", name="cumulative_success_rate", exact=True)).to_be_visible()
    expect(page.get_by_role("cell", name="arm", exact=True)).to_be_visible()
    _shot(page, tmp_path, "bench-arm")


def test_the_traces_tab_shows_the_matts_call_span_by_span(ui, page, tmp_path):
    trace = ui["trace"]
    stored = [span.name for span in trace.data.spans]
    for name, count in MATTS_SPANS.items():  # the store holds what a MaTTS call must show
        assert stored.count(name) == count, (name, stored)

    page.goto(f"{ui['base']}/#/experiments/{ui['experiments']['rbdspy']}/traces")
    row = page.get_by_text(f'{{"task": "{MATTS_TASK}"}}')
    expect(row).to_be_visible()
    row.click()
    detail = page.get_by_role("dialog")
    expect(detail.get_by_text(trace.info.trace_id.removeprefix("tr-")[:8], exact=True)).to_be_visible()
    expect(detail.get_by_text("Success", exact=True)).to_be_visible()
    # The span tree: one row per span of the stored trace (the UI tags each with the span's id).
    rows = detail.locator("[data-testid^='span-title-row-']")
    expect(rows).to_have_count(len(trace.data.spans))
    for span in trace.data.spans:
        expect(detail.get_by_test_id(f"span-title-row-{span.span_id}")).to_contain_text(span.name)
    for name in set(stored):
        expect(rows.get_by_text(name, exact=True)).to_have_count(stored.count(name))

    # Folded one level down, the tree reads as MaTTS does: retrieve, k rollouts each judged, select,
    # distil.
    (root,) = [span for span in trace.data.spans if span.parent_id is None]
    steps = [span for span in trace.data.spans if span.parent_id == root.span_id]
    for span in steps:
        if any(child.parent_id == span.span_id for child in trace.data.spans):
            detail.get_by_test_id(f"toggle-span-expanded-{span.span_id}").click()
    expect(rows).to_have_count(1 + len(steps))
    expect(rows).to_have_text([root.name, *(span.name for span in steps)])
    _shot(page, tmp_path, "trace", docs=True)
