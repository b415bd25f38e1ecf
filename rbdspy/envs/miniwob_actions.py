"""The web's actions, BrowserGym's way: `click(5)`, `fill(7, "Myron")`, `select(4, "Ecuador")`,
`press(7, "Enter")`, each on an element by the ref the page shows; typed as `Act`s that name the
element, listed per page.

Why these four: BrowserGym's high-level action set (`click(bid)`, `fill(bid, value)`,
`select_option(bid, options)`, `press(bid, key_comb)`), which the paper's WebArena runs used, is
what an LM reads and writes; MiniWoB's own element actions (`CLICK_ELEMENT`, `PRESS_KEY`,
`TYPE_TEXT`) carry them out (`miniwob_env.MiniWoB.step`). `fill` replaces a field's text, as
BrowserGym's does (MiniWoB's typing appends). Text cannot be listed, so a text field lists the
template `fill(7, {text} )`, which the agent completes (`rbdspy.envs.action_templates`: the slot is a
word of its own); a list lists every option.

What is read, leniently (a small LM writes `click [5]`, `type [7] Myron`, `click("okay")`): a verb,
then the element (a ref, `[ref]`, or its name, quoted or not) and, after a comma or a space, the text,
option or key. The verb is mapped to its template by a `TemplateGrammar`; an `Act` names the element
by its name on the page (`miniwob_page`), not by its ref, which restarts every episode.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from rbdspy.envs.action_templates import is_template
from rbdspy.envs.actions import Act, TemplateGrammar

CLICK, FILL, SELECT, PRESS = "click {}", "fill {} {}", "select {} {}", "press {} {}"
# How each verb may be written (BrowserGym's names and the forms a small LM writes), over the form
# the lexer gives: "verb | element" or "verb | element | text".
_GRAMMAR = TemplateGrammar(
    {
        "click | {}": CLICK,
        "focus | {}": CLICK,
        "fill | {} | {}": FILL,
        "type | {} | {}": FILL,
        "enter | {} | {}": FILL,
        "select | {} | {}": SELECT,
        "select_option | {} | {}": SELECT,
        "choose | {} | {}": SELECT,
        "press | {} | {}": PRESS,
        "keyboard_press | {} | {}": PRESS,
    },
    writes={CLICK: "click({})", FILL: 'fill({}, "{}")', SELECT: 'select({}, "{}")', PRESS: 'press({}, "{}")'},
    thing=lambda text: text.strip(),
)
TEXT_SLOT = "{text}"
OPTION_SLOT = "{option}"
# Keys `press` takes, as BrowserGym names them (MiniWoB's name is the same in angle brackets,
# `miniwob.constants`); a letter or a digit is itself.
KEY_LABELS = (
    "Enter",
    "Tab",
    "Backspace",
    "Delete",
    "Space",
    "PageUp",
    "PageDown",
    "ArrowUp",
    "ArrowDown",
    "ArrowLeft",
    "ArrowRight",
)
KEYS = {label.lower(): label for label in KEY_LABELS}
HOW = 'write click(ref), fill(ref, "text"), select(ref, "option") or press(ref, "Enter"), with a ref the page shows'
_CALL = re.compile(r"^\s*(?P<verb>[A-Za-z_]+)\s*\((?P<args>.*)\)[^()]*$", re.S)
_BARE = re.compile(r"^\s*(?P<verb>[A-Za-z_]+)\s+(?:on\s+)?(?P<args>.+?)\s*$", re.S)
_QUOTES = "\"'`"


@dataclass(frozen=True)
class WebAction:
    """An action as written: its template (`CLICK` ...), the element (a ref, or a name where the
    action named it) and the text, option or key (None for a click)."""

    template: str
    target: int | str
    value: str | None = None

    @property
    def verb(self) -> str:
        return self.template.split()[0]


def _unquote(text: str) -> str:
    text = text.strip()
    if len(text) >= 2 and text[0] in _QUOTES and text[-1] == text[0]:
        return text[1:-1]
    return text


# A template's placeholder filled as a mapping, `fill(5, {'text': 'Jerald'})`: the value is its entry's.
_AS_MAPPING = re.compile(r"^\{\s*['\"]?\w+['\"]?\s*:\s*(?P<value>.+?)\s*\}$", re.S)


def _value(text: str) -> str:
    """A value as written: quoted, bare, or as the one entry of a mapping (the way a small LM fills
    the listed template `fill(5, {text} )`)."""
    text = _unquote(text)
    mapping = _AS_MAPPING.match(text)
    return _unquote(mapping.group("value")) if mapping else text


def _target(text: str) -> int | str:
    """An element as written: `5`, `[5]`, `ref=5`, `"okay"` -> 5 or "okay"."""
    bare = re.sub(r"^(?:ref|bid|id|element)\s*=\s*", "", text.strip(), flags=re.I).strip("[]# ")
    bare = _unquote(bare)
    return int(bare) if bare.isdigit() else " ".join(bare.replace("|", "/").split())


def _split(args: str) -> tuple[str, str | None]:
    """The element and the rest of a call's arguments (at the first comma outside quotes)."""
    args = args.strip()
    if args and args[0] in _QUOTES:
        end = args.find(args[0], 1)
        if end > 0:
            rest = args[end + 1 :].lstrip()
            return args[: end + 1], (rest[1:] if rest.startswith(",") else rest) or None
    head, comma, tail = args.partition(",")
    return head, (tail if comma else None)


def _split_bare(args: str) -> tuple[str, str | None]:
    """`[7] Myron`, `7 Myron`, `"user name" Myron`, `okay`: the element and what follows it."""
    args = args.strip()
    for pattern in (r"^\[[^\]]*\]", r"^\d+\b", r"^\"[^\"]*\"", r"^'[^']*'"):
        match = re.match(pattern, args)
        if match:
            return match.group(0), args[match.end() :].strip(" ,") or None
    return args, None


def lex(text: str) -> WebAction | None:
    """The action `text` writes, or None where it writes none (nor a template's pattern)."""
    spoken = str(text or "").strip().rstrip(";")
    if not spoken or is_template(spoken):
        return None
    call = _CALL.match(spoken)
    match = call or _BARE.match(spoken)
    if match is None:
        return None
    head, value = (_split if call else _split_bare)(match.group("args"))
    target = _target(head)
    if target == "":
        return None
    value = _value(value) if value is not None else None
    form = f"{match.group('verb').lower()} | {target}" + (f" | {value}" if value else "")
    act = _GRAMMAR.parse(form)
    if act is None:
        return None
    return WebAction(template=act.template, target=target, value=act.args[1] if len(act.args) > 1 else None)


def key_label(key: str) -> str | None:
    """A key as BrowserGym writes it ("enter", "<Enter>" -> "Enter"; "a" -> "a"), or None if `press`
    takes no such key."""
    plain = key.strip().strip("<>")
    if plain.lower() in KEYS:
        return KEYS[plain.lower()]
    return plain if len(plain) == 1 and plain.isascii() and plain.isalnum() else None


def key_name(key: str) -> str | None:
    """MiniWoB's name of a key ("Enter" -> "<Enter>", "a" -> "a"), or None if `press` takes no such key."""
    label = key_label(key)
    if label is None:
        return None
    return f"<{label}>" if len(label) > 1 else label


def written(template: str, target: int | str, value: str | None = None) -> str:
    """The action as the page lists it: `click(5)`, `fill(7, "Myron")`; an element not on the page
    by its name, quoted (`click("Submit")`)."""
    element = str(target) if isinstance(target, int) else f'"{target}"'
    return _GRAMMAR.render(Act(template=template, args=(element,) if value is None else (element, value)))


def as_act(template: str, name: str, value: str | None = None) -> Act:
    """The typed action: its template, the element by name and, where it has one, the text, option or key."""
    return Act(template=template, args=(name,) if value is None else (name, value))


def text_template(ref: int) -> str:
    """The listed pattern for typing into a field: the agent writes its text in the slot."""
    return f"fill({ref}, {TEXT_SLOT} )"


def option_template(ref: int) -> str:
    """The listed pattern for a list with more options than are listed."""
    return f"select({ref}, {OPTION_SLOT} )"
