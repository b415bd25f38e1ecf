"""What `rbdspy bench --agent` says of each agent variant, read from the variants themselves.

Why derived: the help was written by hand and drifted. It said "auto" meant `routes`, long after
EnvAgent's default in a world that persists became `routes-handle`, and it did not list the
variants added since. Here each variant (`agent_variants.AGENT_VARIANTS`, in its order) is
described by the aids it sets otherwise than `NO_AIDS` (`rbdspy.agent.agent_loop.Aids`), as an
earlier variant plus what it adds where one is contained in it ("full (loop-suggest + focus)"),
and a variant chosen per task (`AidsByWorld`, "auto") by the variants it plays in a world that
persists and elsewhere. A changed or new variant changes its help with it.
"""

from __future__ import annotations

from dataclasses import fields

from rbdspy.agent.agent_loop import NO_AIDS, Aids, AidsByWorld
from rbdspy.bench.agent_variants import AGENT_VARIANTS

# A base variant is named only when it stands for at least this many aids (else the aids are listed).
_MIN_BASE = 2


def aid_changes(aids: Aids) -> tuple[str, ...]:
    """The aids `aids` sets otherwise than `NO_AIDS`, in `Aids`' order: an aid turned on by its
    name, one turned off as "<name> off" (`show_memory off`: the memory block out of the prompt)."""
    return tuple(
        f.name if getattr(aids, f.name) else f"{f.name} off"
        for f in fields(Aids)
        if getattr(aids, f.name) != getattr(NO_AIDS, f.name)
    )


def _name_of(aids: Aids) -> str | None:
    """The first variant that is exactly `aids`, if one is."""
    return next((name for name, value in AGENT_VARIANTS.items() if value == aids), None)


def _describe_aids(name: str, aids: Aids) -> str:
    changes = aid_changes(aids)
    if not changes:
        return "no aid"
    earlier = list(AGENT_VARIANTS)[: list(AGENT_VARIANTS).index(name)] if name in AGENT_VARIANTS else []
    bases = [
        (len(base), other)
        for other in earlier
        if isinstance(AGENT_VARIANTS[other], Aids)
        and len(base := set(aid_changes(AGENT_VARIANTS[other]))) >= _MIN_BASE
        and base < set(changes)
    ]
    if not bases:
        return ", ".join(changes)
    _, base = max(bases, key=lambda found: found[0])  # the largest; of equals, the first
    added = [change for change in changes if change not in set(aid_changes(AGENT_VARIANTS[base]))]
    return f"{base} + {', '.join(added)}"


def describe_variant(name: str) -> str:
    """What variant `name` plays with, in a few words ("loop + suggest"; for "auto": "EnvAgent's
    own choice, per task: routes-handle in a world that persists, plain elsewhere")."""
    aids = AGENT_VARIANTS[name]
    if isinstance(aids, AidsByWorld):
        persistent, elsewhere = (
            _name_of(part) or f"({_describe_aids(name, part)})" for part in (aids.persistent, aids.elsewhere)
        )
        return f"EnvAgent's own choice, per task: {persistent} in a world that persists, {elsewhere} elsewhere"
    return _describe_aids(name, aids)


def agent_help() -> str:
    """`rbdspy bench --agent`'s help: every variant, each with what it plays with."""
    variants = " | ".join(f"{name} ({describe_variant(name)})" for name in AGENT_VARIANTS)
    return (
        "The agent every arm plays with, as the loop aids it turns on (EnvAgent's options, "
        f"rbdspy.agent.agent_loop): {variants}."
    )
