"""What memory did in a run, from the run's own records: which items were served and how the
tasks they were served on ended against the arm's base rate, what kinds of items were written,
and what the memory loop cost next to the agent. A loss must be explainable from this, without
opening the bank.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import Any

from rbdspy.bench.tables import pct, table

TOP_ITEMS = 5
ITEM_COLUMNS = ("most served item", "kind", "served", "success when served", "vs base rate")


def _rate(values: list[bool]) -> float | None:
    return sum(values) / len(values) if values else None


def memory_summary(rows: list[dict[str, Any]]) -> dict[str, Any] | None:
    """One arm's memory figures; None for an arm that never retrieved nor wrote anything."""
    if not any(r.get("retrieved") or r.get("written") for r in rows):
        return None
    outcomes: dict[str, list[bool]] = defaultdict(list)
    about: dict[str, dict[str, Any]] = {}
    for row in rows:
        for hit in row.get("retrieved") or []:
            outcomes[hit["id"]].append(bool(row["success"]))
            about[hit["id"]] = {"title": hit["title"], "source": hit["source"]}
    top = sorted(outcomes, key=lambda i: (-len(outcomes[i]), about[i]["title"]))[:TOP_ITEMS]
    written = Counter(w["source"] for row in rows for w in row.get("written") or [])
    wins = [r for r in rows if r["success"]]
    losses = [r for r in rows if not r["success"]]
    agent = sum(r.get("agent_prompt_tokens", 0) for r in rows)
    loop = sum(r.get("loop_prompt_tokens", 0) for r in rows)
    return {
        "labels": _labels(rows),
        "labels_measured": _labels([r for r in rows if r.get("phase") == "measure"]),
        "base_rate": _rate([bool(r["success"]) for r in rows]),
        "served_on_wins": _rate([bool(r.get("retrieved")) for r in wins]),
        "served_on_losses": _rate([bool(r.get("retrieved")) for r in losses]),
        # A control's fixed memory has no similarity (it is served, not retrieved).
        "mean_similarity": _rate(
            [h["similarity"] for r in rows for h in r.get("retrieved") or [] if h.get("similarity") is not None]
        ),
        "top_items": [
            {"id": i, **about[i], "served": len(outcomes[i]), "success_when_served": _rate(outcomes[i])} for i in top
        ],
        "written_by_source": dict(written),
        "lesson_truth": _truth(rows),
        "suggestions": _suggestions(rows),
        "scans": _scans(rows),
        "agent_prompt_tokens": agent,
        "loop_prompt_tokens": loop,
        "loop_overhead": loop / agent if agent else None,
    }


def _truth(rows: list[dict[str, Any]]) -> dict[str, int] | None:
    """On a world that knows its facts: the items written, those that state facts about it, those
    whose every claim is true, and the claims counted (None where nothing was checked)."""
    checked = [w["truth"] for row in rows for w in row.get("written") or [] if "truth" in w]
    if not checked:
        return None
    stating = [t for t in checked if t["claims"]]
    return {
        "items": len(checked),
        "stating_facts": len(stating),
        "all_true": sum(1 for t in stating if t["true"] == t["claims"]),
        "claims": sum(t["claims"] for t in checked),
        "true_claims": sum(t["true"] for t in checked),
    }


def _suggestions(rows: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The steps the map offered before the agent's actions, how many it played, and what kind of
    step each was (`suggested_why`; records written before it was kept say only the step). None
    where the map offered nothing."""
    offered = []
    for row in rows:
        suggested = row.get("suggested") or []
        why = row.get("suggested_why") or [None] * len(suggested)
        actions = row.get("actions") or []
        offered += [(s, a, w) for s, a, w in zip(suggested, actions, why, strict=False) if s]
    if not offered:
        return None
    return {
        "actions": sum(len(r.get("actions") or []) for r in rows),
        "offered": len(offered),
        "played": sum(1 for s, a, _ in offered if s == a),
        "explained": sum(1 for *_, w in offered if w),
        "by_step": dict(Counter(w["step"] for *_, w in offered if w)),
    }


def _scans(rows: list[dict[str, Any]]) -> dict[str, int] | None:
    """How many answers in view the agent's scan asked about, and how many picks it played, in how
    many episodes those ended won; None where it asked about none (or the records do not say)."""
    asked = sum(1 for r in rows for check in r.get("answer_checks") or [] if check.get("scan"))
    if not asked:
        return None
    picked = [r for r in rows if any(r.get("scanned") or [])]
    return {
        "asked": asked,
        "played": sum(sum(r["scanned"]) for r in picked),
        "episodes": len(picked),
        "won": sum(1 for r in picked if r["success"]),
    }


def _labels(rows: list[dict[str, Any]]) -> dict[str, int]:
    """How the labels the bank learned from (the judge's verdicts, or the environment's with
    trust_outcome) compare with the environment's outcome: a false success writes a wrong strategy,
    a false failure a wrong guardrail."""
    labelled = [r for r in rows if r.get("verdict")]
    return {
        "labelled": len(labelled),
        "agree": sum(1 for r in labelled if (r["verdict"] == "success") == bool(r["success"])),
        "false_success": sum(1 for r in labelled if r["verdict"] == "success" and not r["success"]),
        "false_failure": sum(1 for r in labelled if r["verdict"] == "failure" and r["success"]),
        "indeterminate": sum(1 for r in labelled if r["verdict"] == "indeterminate"),
    }


def memory_markdown(results: dict[str, Any]) -> str:
    """The memory section of results.md: one block per arm that has memory."""
    blocks = ["## Memory", ""]
    for arm, summary in (results.get("memory") or {}).items():
        if summary is None:
            continue
        written = ", ".join(f"{kind} {n}" for kind, n in sorted(summary["written_by_source"].items())) or "none"
        blocks += [
            f"### {arm}",
            "",
            f"Base rate {pct(summary['base_rate'])}; a memory was served on {pct(summary['served_on_wins'])} of wins "
            f"and {pct(summary['served_on_losses'])} of losses; mean similarity of served items "
            f"{_similarity(summary['mean_similarity'])}. Items written by kind: {written}. The memory loop read "
            f"{summary['loop_prompt_tokens']:,} prompt tokens against the agent's {summary['agent_prompt_tokens']:,} "
            f"(+{pct(summary['loop_overhead'])}).{_labels_sentence(summary.get('labels'))}"
            f"{_truth_sentence(summary.get('lesson_truth'))}{_suggestions_sentence(summary.get('suggestions'))}"
            f"{_scans_sentence(summary.get('scans'))}",
            "",
        ]
        rows = []
        for item in summary["top_items"]:
            delta = item["success_when_served"] - (summary["base_rate"] or 0.0)
            served = pct(item["success_when_served"])
            rows.append([item["title"], item["source"], item["served"], served, f"{100 * delta:+.0f} pp"])
        blocks += [table(ITEM_COLUMNS, rows, align="llrrr"), ""]
    return "\n".join(blocks) if len(blocks) > 2 else ""


def _similarity(value: float | None) -> str:
    """A control's fixed memory is served without a similarity: "-" rather than a made-up 0.00."""
    return "-" if value is None else f"{value:.2f}"


def _truth_sentence(truth: dict[str, int] | None) -> str:
    if not truth:
        return ""
    return (
        f" Lesson truth: {truth['stating_facts']} of {truth['items']} items written state facts about the world, "
        f"{truth['all_true']} of them all true ({truth['true_claims']} of {truth['claims']} claims true)."
    )


def _suggestions_sentence(suggestions: dict[str, Any] | None) -> str:
    if not suggestions:
        return ""
    kinds = ", ".join(f"{step} {n}" for step, n in sorted(suggestions["by_step"].items()))
    return (
        f" The map offered a step before {suggestions['offered']} of {suggestions['actions']} actions and the agent "
        f"played {suggestions['played']} of them; {suggestions['explained']} say why in the records"
        f"{f' ({kinds})' if kinds else ''}."
    )


def _scans_sentence(scans: dict[str, int] | None) -> str:
    if not scans:
        return ""
    return (
        f" The agent's scan asked about {scans['asked']} answers in view and played {scans['played']} picks, in "
        f"{scans['episodes']} episodes, {scans['won']} of them won."
    )


def _labels_sentence(labels: dict[str, int] | None) -> str:
    if not labels or not labels["labelled"]:
        return ""
    return (
        f" Labels agreed with the environment on {labels['agree']} of {labels['labelled']} tasks "
        f"(false success {labels['false_success']}, false failure {labels['false_failure']}, "
        f"indeterminate {labels['indeterminate']})."
    )
