"""Which MiniWoB++ task types the web adapter offers, which it keeps out, and how seeds split.

Why its own module: the held-out types are a promise to checks from outside (they stay out of every
run and every tuning), and a test reads this module to hold every task set, stream and test to it.

- `HELD_OUT_TYPES`: twelve types kept for checks from outside. The adapter refuses them unless it is
  built with `allow_held_out=True`, which only such a check passes.
- `POINTER_TYPES`: types that need the pointer at coordinates (drag, draw, an angle, a colour wheel,
  selecting text with the mouse): the typed actions address elements, never coordinates, so these
  are not offered. FlightWoB (`flight.*`) needs a local HTTP server and is not offered either.
- Seeds: a task is a type and a seed (`Math.seedrandom(seed)` before the page makes its problem);
  train, dev and test take disjoint seed ranges, the seed itself is the task id's variation
  (`miniwob/click-button/dev/10003`), as TextWorld-Express's are.
"""

from __future__ import annotations

from functools import lru_cache

HELD_OUT_TYPES: frozenset[str] = frozenset(
    {
        "login-user-popup",
        "email-inbox-forward-nl",
        "enter-password",
        "click-checkboxes-soft",
        "click-tab-2-medium",
        "use-autocomplete",
        "search-engine",
        "form-sequence-2",
        "choose-date-easy",
        "social-media-some",
        "navigate-tree",
        "multi-orderings",
    }
)
POINTER_TYPES: frozenset[str] = frozenset(
    {
        "bisect-angle",
        "circle-center",
        "drag-box",
        "drag-circle",
        "drag-cube",
        "drag-items",
        "drag-items-grid",
        "drag-shapes",
        "drag-shapes-2",
        "drag-single-shape",
        "drag-sort-numbers",
        "draw-circle",
        "draw-line",
        "find-midpoint",
        "highlight-text",
        "highlight-text-2",
        "resize-textarea",
        "right-angle",
        "use-colorwheel",
        "use-colorwheel-2",
    }
)
SEEDS: dict[str, range] = {"train": range(0, 10_000), "dev": range(10_000, 20_000), "test": range(20_000, 30_000)}


@lru_cache(maxsize=1)
def registered_types() -> tuple[str, ...]:
    """Every MiniWoB++ task type the `miniwob` package defines an environment for (the classes it
    registers with gymnasium as "miniwob/<type>-v1"), by name; FlightWoB's are in a module of their own."""
    import inspect

    from miniwob.envs import miniwob_envs

    found = {getattr(c, "subdomain", None) for _, c in inspect.getmembers(miniwob_envs, inspect.isclass)}
    return tuple(sorted(t for t in found if isinstance(t, str) and t and not t.startswith("flight.")))


def offered_types(allow_held_out: bool = False) -> list[str]:
    """The types the adapter plays: registered, element-addressable, the held-out ones only when allowed."""
    return [t for t in registered_types() if t not in POINTER_TYPES and (allow_held_out or t not in HELD_OUT_TYPES)]


def held_out_refusal(task_type: str) -> str:
    """Why a held-out type is refused, in one line."""
    return (
        f"{task_type!r} is a held-out MiniWoB type (rbdspy.envs.miniwob_tasks.HELD_OUT_TYPES): it is kept "
        "for checks from outside and stays out of every run and tuning"
    )


def split_of(seed: int) -> str | None:
    """The split a seed belongs to, or None outside every split's range."""
    return next((split for split, seeds in SEEDS.items() if seed in seeds), None)
