"""Every ```python block of README.md and docs/ (docs/bench/ excepted: benchmark outputs) runs as
written, so the documentation cannot drift from the code.

How a page runs: its blocks are executed in order in one namespace (a later block may use what an
earlier one defined, as a reader would), in a fresh temporary directory that holds a link to the
repository's datasets/ (the docs' paths are relative to the repository root). No network, no model
download, no API key:

- ``rbdspy.make_lm(spec)`` returns `DocsLM`, a scripted LM that answers any signature: it reads
  the output fields from the prompt and fills each one by its name and type (a judge says
  "success", an extractor writes one lesson, an agent answers "look around"). A spec other than
  "local"/"local-fast" is still checked by the real factory first, so a docs page cannot show a
  model string rbdspy would refuse (OPENAI_API_KEY is set to a placeholder, as the pages ask).
- ``rbdspy.make_embedder(spec)`` returns the deterministic `HashEmbedder`.
- MLflow writes to a SQLite store in the page's directory.

Top-level ``await`` is allowed (pages show async calls as a reader would type them in a notebook).
A block that cannot run here is preceded by ``<!-- docs-test: skip REASON -->``; such blocks are
counted and printed by `test_skipped_blocks_are_few`. One that needs Java or a browser is preceded by
``<!-- docs-test: needs java -->`` (``needs chromium``) and runs where it is installed (CI installs
both).
"""

from __future__ import annotations

import ast
import asyncio
import inspect
import json
import re
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import dspy
import pytest
from dspy.clients.engines.dummy_engine import AsyncDummyEngine, DummyEngine
from dspy.utils import DummyLM

ROOT = Path(__file__).resolve().parents[1]
SKIP = re.compile(r"<!--\s*docs-test:\s*skip\s+(?P<reason>.+?)\s*-->")
NEEDS = re.compile(r"<!--\s*docs-test:\s*needs\s+(?P<what>java|chromium)\s*-->")
FENCE = re.compile(r"^```python[ \t]*\n(?P<code>.*?)^```[ \t]*$", re.M | re.S)


@dataclass
class Block:
    page: str
    line: int  # line of the block's first code line in the page
    code: str
    skip: str | None  # the reason, when the page marks the block as not runnable here
    needs: str | None


def pages() -> list[Path]:
    docs = sorted(p for p in (ROOT / "docs").rglob("*.md") if "bench" not in p.relative_to(ROOT / "docs").parts[:1])
    return [ROOT / "README.md", *docs]


def blocks(path: Path) -> list[Block]:
    text = path.read_text(encoding="utf-8")
    found = []
    for match in FENCE.finditer(text):
        before = text[: match.start()].rstrip().rsplit("\n", 1)[-1]  # the line just above the fence
        skip, needs = SKIP.search(before), NEEDS.search(before)
        found.append(
            Block(
                page=str(path.relative_to(ROOT)),
                line=text.count("\n", 0, match.start("code")) + 1,
                code=match.group("code"),
                skip=skip.group("reason") if skip else None,
                needs=needs.group("what") if needs else None,
            )
        )
    return found


# ---------------------------------------------------------------------------- the scripted LM

LESSON = {
    "title": "Check the goal before acting",
    "description": "When a task names a goal to reach.",
    "content": "Restate the goal, then take the action that moves toward it.",
}
BY_NAME: dict[str, Any] = {
    "verdict": "success",
    "best_index": 0,
    "lessons": [LESSON],
    "action": "look around",
    "steps": ["look around", "take the object the task names"],
}
OUTPUT_FIELD = re.compile(r"^\d+\. `(?P<name>\w+)` \((?P<type>.*?)\):", re.M)


def scripted_value(name: str, type_: str) -> Any:
    if name in BY_NAME:
        return BY_NAME[name]
    if type_.startswith("Literal["):
        return ast.literal_eval(f"[{type_[len('Literal[') : -1]}]")[0]
    simple = {"int": 0, "float": 0.0, "bool": True, "dict": {}}
    if type_ in simple:
        return simple[type_]
    if type_ == "list[str]":
        return [f"scripted {name}"]
    if type_.startswith(("list", "dict")):
        return [] if type_.startswith("list") else {}
    return f"scripted {name}"


TOOL_ARGS = re.compile(r"(?P<name>\w+), whose description is <desc>.*?</desc>\. It takes arguments (?P<args>\{.*?\})\.")
JSON_TYPES = {"integer": "int", "number": "float", "boolean": "bool", "array": "list", "object": "dict"}


def scripted_tool_calls(messages: list[dict]) -> dict:
    """A ReActV2 turn: its first turn calls the first tool it lists (the one a ReAct's
    `next_tool_name` would name), a turn after a tool's results calls `submit`; each argument is
    filled by its name and JSON type as an output field is."""
    tools = {m["name"]: ast.literal_eval(m["args"]) for m in TOOL_ARGS.finditer(messages[-1]["content"])}
    if not tools:
        return {"tool_calls": []}
    # A later turn follows the results of the calls before it; demos (user/assistant pairs) do not.
    later = len(messages) > 1 and messages[-2]["content"].startswith("[[ ## tool_call_results ## ]]")
    name = "submit" if later and "submit" in tools else next(iter(tools))
    args = {arg: scripted_value(arg, JSON_TYPES.get(schema.get("type"), "str")) for arg, schema in tools[name].items()}
    return {"tool_calls": [{"name": name, "args": args}]}


def scripted_answer(messages: list[dict]) -> str:
    system = messages[0]["content"] if messages and messages[0]["role"] == "system" else ""
    outputs = system.split("Your output fields are:", 1)[-1].split("All interactions will be structured", 1)[0]
    values = {
        m["name"]: scripted_tool_calls(messages) if m["type"] == "ToolCalls" else scripted_value(m["name"], m["type"])
        for m in OUTPUT_FIELD.finditer(outputs)
    }
    if "Respond with a JSON object" in messages[-1]["content"]:
        return json.dumps(values)
    parts = [f"[[ ## {k} ## ]]\n{v if isinstance(v, str) else json.dumps(v)}" for k, v in values.items()]
    return "\n\n".join([*parts, "[[ ## completed ## ]]"])


class _Engine(DummyEngine):
    def _complete_messages(self, messages):
        from dspy.lm15 import Message, Response, TextPart, Usage

        output = scripted_answer(messages)
        usage = Usage(
            input_tokens=sum(len(m["content"]) for m in messages) // 4, output_tokens=len(output) // 4, total_tokens=0
        )
        return Response(
            id=None, model="docs", message=Message.assistant([TextPart(output)]), finish_reason="stop", usage=usage
        )


class DocsLM(DummyLM):
    """Answers any DSPy signature, in the format (chat or JSON) the prompt asks for."""

    def __init__(self):
        super().__init__({})
        self._engine_spec = _Engine(self)
        self._async_engine_spec = AsyncDummyEngine(self._engine_spec)

    def copy(self, **kwargs):  # MaTTS samples its rollouts through copies
        copied = super().copy(**kwargs)
        copied._engine_spec = _Engine(copied)
        copied._async_engine_spec = AsyncDummyEngine(copied._engine_spec)
        return copied


# ---------------------------------------------------------------------------- running a page


@pytest.fixture
def docs_env(tmp_path, monkeypatch):
    """The page's working directory, with rbdspy's model factories scripted."""
    import rbdspy
    import rbdspy.lm
    import rbdspy.lm.factory as factory
    from rbdspy.memory.embedders import HashEmbedder

    real_make_lm = factory.make_lm

    def make_lm(spec=None, **kw):
        if spec not in (None, "local", "local-fast"):
            real_make_lm(spec, **kw)  # a spec rbdspy refuses fails the page
        return DocsLM()

    def make_embedder(spec=None):
        return HashEmbedder(dim=64)

    for module in (rbdspy, rbdspy.lm, factory):
        monkeypatch.setattr(module, "make_lm", make_lm)
        monkeypatch.setattr(module, "make_embedder", make_embedder)
    monkeypatch.setenv("OPENAI_API_KEY", "docs-test")  # as a reader of the pages exported it (make_lm checks it)
    monkeypatch.setenv("MLFLOW_TRACKING_URI", f"sqlite:///{tmp_path / 'mlflow.db'}")
    monkeypatch.setenv("RBDSPY_MLFLOW_AUTOLOG", "0")
    monkeypatch.delenv("MLFLOW_EXPERIMENT_ID", raising=False)  # mlflow.set_experiment exports it
    (tmp_path / "datasets").symlink_to(ROOT / "datasets")
    monkeypatch.chdir(tmp_path)
    import mlflow

    previous_uri = mlflow.get_tracking_uri()
    forget_mlflow_state()  # an experiment made active by an earlier test lives in another store
    yield tmp_path
    # A page may have set MLflow's tracking store, experiment, run or model (rbdspy.tracking.setup
    # sets them globally): none of it outlives the page's directory.
    forget_mlflow_state()
    mlflow.set_tracking_uri(previous_uri)


def forget_mlflow_state() -> None:
    import mlflow
    import mlflow.tracking.fluent as fluent

    while mlflow.active_run() is not None:
        mlflow.end_run()
    mlflow.clear_active_model()
    fluent._active_experiment_id = None  # MLflow has no public way to unset the active experiment


def run_block(block: Block, namespace: dict) -> None:
    # Leading newlines keep the page's line numbers in tracebacks.
    source = "\n" * (block.line - 1) + block.code
    code = compile(source, block.page, "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
    result = eval(code, namespace)  # the documentation's own code
    if inspect.iscoroutine(result):
        asyncio.run(result)


RUNNABLE = [p for p in pages() if blocks(p)]


@pytest.mark.parametrize("page", RUNNABLE, ids=[str(p.relative_to(ROOT)) for p in RUNNABLE])
def test_page_runs(page, docs_env):
    namespace: dict = {"__name__": "__docs__"}
    ran = 0
    for block in blocks(page):
        if block.skip:
            continue
        if block.needs == "java" and shutil.which("java") is None:
            pytest.skip(f"{block.page}:{block.line} needs Java (the environments run on the JVM)")
        if block.needs == "chromium" and shutil.which("chromedriver") is None:
            pytest.skip(f"{block.page}:{block.line} needs Debian's chromium and chromium-driver (the web pages)")
        try:
            run_block(block, namespace)
        except Exception as exc:
            raise AssertionError(f"the block at {block.page}:{block.line} failed: {exc!r}") from exc
        ran += 1
    assert ran, f"{page} has python blocks but none ran"


def test_skipped_blocks_are_few(capsys):
    every = [b for p in pages() for b in blocks(p)]
    skipped = [b for b in every if b.skip]
    with capsys.disabled():
        print(f"\ndocs: {len(every)} python blocks, {len(skipped)} skipped")
        for b in skipped:
            print(f"  skipped {b.page}:{b.line}: {b.skip}")
    assert len(every) > 20  # the README and the guides are found
    assert len(skipped) <= 3, "a docs block that cannot run here is the exception; make it runnable"


def test_the_scripted_lm_answers_any_signature():
    class Plan(dspy.Signature):
        """Plan a task."""

        task: str = dspy.InputField()
        kind: str = dspy.OutputField()
        ideas: list[str] = dspy.OutputField()
        confident: bool = dspy.OutputField()

    for adapter in (dspy.ChatAdapter(), dspy.JSONAdapter()):
        with dspy.context(lm=DocsLM(), adapter=adapter):
            pred = dspy.ChainOfThought(Plan)(task="tidy the room")
        assert (pred.kind, pred.ideas, pred.confident) == ("scripted kind", ["scripted ideas"], True)


def test_the_scripted_lm_drives_react_v2_through_its_tools():
    calls = []

    def look() -> str:
        """What the agent sees."""
        calls.append(("look", None))
        return "a page with a button"

    def act(action: str) -> str:
        """Send one action."""
        calls.append(("act", action))
        return "clicked"

    with dspy.context(lm=DocsLM()):
        pred = dspy.ReActV2("task -> answer", tools=[look, act], max_iters=4)(task="click the button")
    assert calls == [("look", None)]  # the first tool it lists, then submit
    assert (pred.answer, pred.termination_reason) == ("scripted answer", "submit")

    # A step predictor with demos still starts with a tool, and typed outputs are submitted typed.
    agent = dspy.ReActV2("task -> answer, score: int", tools=[look, act], max_iters=4)
    first_look = {"tool_calls": [{"name": "look", "args": {}}]}
    agent.react.demos = [dspy.Example(task="click the link", next_thought="look first", tool_calls=first_look)]
    with dspy.context(lm=DocsLM()):
        pred = agent(task="click the button")
    assert calls == [("look", None)] * 2 and (pred.answer, pred.score) == ("scripted answer", 0)
