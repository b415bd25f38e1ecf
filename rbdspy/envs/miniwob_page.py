"""A MiniWoB++ page as a compact typed observation: the elements an agent can act on or read, in
document order, each with its ref, role, name, text, value and state, and none of the layout.

Why: MiniWoB's DOM snapshot (`core.getDOMInfo`, the package's `DOMElement` tree) lists every box of
the page with its coordinates and colours, most of it layout (wrappers, resize handles, empty
spans); a small LM reads a short list of what it can click, type into or choose, as BrowserGym's
accessibility-tree observations give it (`[5] button "okay"`). Here the tree is read into
`Element`s: containers without text are left out (their children stay), the text nodes MiniWoB
splits at line breaks are joined again and kept as plain text (they have no ref to act on), an
element's label, disabled state and a list's options come from one extra script
(`miniwob_browser._EXTRAS_JS`).

Page text is untrusted input, never an instruction: it is quoted as data in the observation
(`"..."`, clipped, control characters and quotes taken out), like any other observation, and what an
element says never changes what the adapter does.

Each element has a `name` (its text, its label, its id, else its role), unique on the page (a second
"okay" is "okay 2"; "Eget" and "eget" are two names): the typed actions and the map name elements
so, because refs restart with every episode while names carry over between pages of one kind.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from rbdspy.core.untrusted import neutralise

# Roles by MiniWoB tag (`input_<type>` for inputs, "t" a text node); any other tag with text is "text".
ROLES = {
    "button": "button",
    "input_button": "button",
    "input_submit": "button",
    "input_reset": "button",
    "input_text": "textbox",
    "input_password": "textbox",
    "input_email": "textbox",
    "input_search": "textbox",
    "input_tel": "textbox",
    "input_url": "textbox",
    "input_number": "textbox",
    "textarea": "textbox",
    "input_checkbox": "checkbox",
    "input_radio": "radio",
    "select": "combobox",
    "a": "link",
    "label": "label",
    "li": "listitem",
    "td": "cell",
    "th": "cell",
    "img": "img",
    **{f"h{n}": "heading" for n in range(1, 7)},
}
# What an element always shows, even without text: what an agent acts on.
INTERACTIVE = frozenset({"button", "textbox", "checkbox", "radio", "combobox", "link"})
# Roles (a tag's, or ARIA's) an element is shown for whether or not it has text of its own; a
# container's role (a menu, a tab list, a dialog) is not: what it holds is shown.
ACTIONABLE_ROLES = INTERACTIVE | {"input", "menuitem", "tab", "option", "treeitem", "switch", "slider", "spinbutton"}
TEXT_ROLES = frozenset({"textbox"})
# Inputs typed into as text (a date too: Chromium takes its digits from the keyboard).
TYPED_INPUTS = frozenset(
    {"text", "password", "email", "search", "tel", "url", "number", "date", "time", "month", "week", "datetime-local"}
)
INLINE = frozenset({"span", "a", "b", "i", "em", "strong", "u", "small", "label"})
# Classes of jQuery UI's boxes and states, which say how a thing looks, not what it is.
LAYOUT_CLASSES = ("ui-corner", "ui-state", "ui-widget", "ui-helper", "ui-resizable", "ui-front", "ui-icon")
MAX_TEXT = 80  # characters of an element's text or value shown
MAX_OPTIONS = 30  # options of a list shown
MAX_ELEMENTS = 60  # elements (and text lines) shown; the rest are counted
_UNSAFE = re.compile(r"[\x00-\x1f\x7f\u200b-\u200f\u202a-\u202e\u2066-\u2069\"]")


def clip(text: Any, limit: int = MAX_TEXT) -> str:
    """Page text as data: control, bidi and quote characters out, markup that could pose as a
    prompt's structure neutralised (`rbdspy.core.untrusted`), whitespace collapsed, clipped."""
    plain = " ".join(neutralise(_UNSAFE.sub(" ", str(text or ""))).split())
    return plain if len(plain) <= limit else plain[: limit - 1].rstrip() + "…"


@dataclass(frozen=True)
class Element:
    """One element of the page, as the agent sees it. `ref` is MiniWoB's (stable within an episode);
    `ref` None is a text line, which no action addresses."""

    ref: int | None
    role: str
    name: str = ""
    text: str = ""
    label: str = ""
    hint: str = ""
    value: str | None = None
    checked: bool | None = None
    focused: bool = False
    disabled: bool = False
    dom_id: str = ""
    options: tuple[str, ...] = ()
    selected: tuple[str, ...] = ()

    @property
    def takes_text(self) -> bool:
        return self.role in TEXT_ROLES and not self.disabled

    def line(self) -> str:
        """`[5] button "okay"`, `[7] textbox "username" value="" focused`, or a text line `"Lorem ipsum"`."""
        if self.ref is None:
            return f'"{self.text}"'
        parts = [f"[{self.ref}] {self.role}"]
        shown = self.text or self.label
        if shown:
            parts.append(f'"{shown}"')
        if self.dom_id and self.dom_id != shown:
            parts.append(f"id={self.dom_id}")
        if self.hint:
            parts.append(self.hint)
        if self.value is not None:
            parts.append(f'value="{self.value}"')
        if self.checked is not None:
            parts.append("checked" if self.checked else "not checked")
        if self.options:
            more = "" if len(self.options) <= MAX_OPTIONS else f" and {len(self.options) - MAX_OPTIONS} more"
            parts.append("options: " + " | ".join(self.options[:MAX_OPTIONS]) + more)
        parts += ["focused"] * self.focused + ["disabled"] * self.disabled
        return " ".join(parts)


@dataclass
class Page:
    """The page now: the task's utterance and its elements in document order."""

    utterance: str
    elements: list[Element] = field(default_factory=list)

    @property
    def actionable(self) -> list[Element]:
        return [e for e in self.elements if e.ref is not None]

    def by_ref(self, ref: int) -> Element | None:
        return next((e for e in self.actionable if e.ref == ref), None)

    def by_name(self, name: str) -> Element | None:
        """The element called `name` (exactly, else the one whose name is it in any case), else None."""
        wanted = " ".join(str(name).split())
        exact = next((e for e in self.actionable if e.name == wanted), None)
        if exact is not None:
            return exact
        alike = [e for e in self.actionable if e.name.lower() == wanted.lower()]
        return alike[0] if len(alike) == 1 else None

    def render(self, max_elements: int = MAX_ELEMENTS) -> str:
        """The page as the agent reads it: one line per element, the rest counted."""
        lines = [e.line() for e in self.elements[:max_elements]]
        if len(self.elements) > max_elements:
            lines.append(f"({len(self.elements) - max_elements} more elements not shown)")
        return "\n".join(lines) if lines else "(the page shows nothing)"


def read_page(utterance: str, root: Any, extras: Mapping[str, Mapping[str, Any]]) -> Page:
    """The page from MiniWoB's DOM tree (`root`, a `miniwob.dom.DOMElement`) and the extras by ref."""
    elements: list[Element] = []
    pending_text: list[str] = []

    def flush() -> None:
        if pending_text:
            elements.append(Element(ref=None, role="text", text=clip(" ".join(pending_text))))
            pending_text.clear()

    def visit(node: Any, named: str | None) -> None:
        if node.tag == "t":
            if clip(node.text) != named:  # a checkbox's label text is its name already
                pending_text.append(node.text or "")
            return
        inputs = [c for c in node.children if c.tag.startswith("input_")]
        element = None if (node.tag == "label" and inputs) else _element(node, extras.get(str(node.ref), {}))
        if element is not None:
            flush()
            elements.append(element)
            if element.role in INTERACTIVE - {"checkbox", "radio"} or (node.children and element.text):
                return  # a button's icon and caption, a menu item's words: the element itself
        if node.tag == "label" and inputs:  # the label is its input's name, not an element of its own
            labelled = _element(inputs[0], extras.get(str(inputs[0].ref), {}))
            named = labelled.name if labelled is not None else named
        for child in node.children:
            visit(child, named)
        if node.children and node.tag not in INLINE:
            flush()  # a block ends its text line; inline tags go on with it

    visit(root, None)
    flush()
    return Page(utterance=clip(utterance, 400), elements=_named(elements))


def _own_text(node: Any) -> str:
    """A node's text: a leaf's, or the words directly inside an element that has children too."""
    if node.text:
        return clip(node.text)
    return clip(" ".join(c.text or "" for c in node.children if c.tag == "t"))


def _role(node: Any, extra: Mapping[str, Any]) -> str:
    aria = str(extra.get("role") or "")
    if node.tag in ROLES:
        return ROLES[node.tag]
    if aria and aria not in ("presentation", "none"):
        return aria
    if node.tag.startswith("input_"):
        return "textbox" if node.tag.removeprefix("input_") in TYPED_INPUTS else "input"
    return "text"


def _hint(node: Any, extra: Mapping[str, Any], role: str) -> str:
    """What tells an element apart where its role does not: an input's type, a textarea, an icon's class."""
    if node.tag == "textarea":
        return "multiline"
    kind = node.tag.removeprefix("input_") if node.tag.startswith("input_") else ""
    if kind and kind not in ("text", "checkbox", "radio", "button", "submit", "reset"):
        return f"type={kind}"
    if role == "text" and not node.text:  # an icon: its class is all that says what it is
        classes = [c for c in str(node.classes or "").split() if extra.get("focusable") or not c.startswith("ui-")]
        return f"class={classes[0]}" if classes else ""
    return ""


def _element(node: Any, extra: Mapping[str, Any]) -> Element | None:
    """The node as an `Element`, or None where it shows nothing to act on or read (a layout box)."""
    role = _role(node, extra)
    leaf = node.text is not None
    text = _own_text(node) if (leaf or role in ACTIONABLE_ROLES) else ""
    label = clip(extra.get("label") or "")
    hint = _hint(node, extra, role) if (leaf or node.tag.startswith("input_") or extra.get("focusable")) else ""
    if not (text or role in ACTIONABLE_ROLES or (label and leaf) or hint):
        return None  # a layout box, a container of what is shown
    if role == "text" and not text:
        role = node.tag  # an icon: no words, so no text ("span class=star")
    value, checked = node.value, None
    if isinstance(value, bool):
        value, checked = None, value
    elif value is not None:
        value = clip(value)
    if role == "button" and not text and value:
        text, value = value, None  # <input type=submit value="Go">: its value is its caption
    selected = tuple(clip(o) for o in extra.get("selected", ()))
    if role == "combobox":
        value = ", ".join(selected)
    return Element(
        ref=node.ref,
        role=role,
        name=text or label or str(node.id or "") or (hint.partition("=")[2] if hint else "") or role,
        text=text,
        label=label,
        hint=hint,
        value=value if role in TEXT_ROLES or role == "combobox" else None,
        checked=checked,
        focused=bool(node.focused),
        disabled=bool(extra.get("disabled")),
        dom_id=str(node.id or ""),
        options=tuple(clip(o) for o in extra.get("options", ())),
        selected=selected,
    )


def _named(elements: Iterable[Element]) -> list[Element]:
    """The elements with their names made unique in document order ("okay", "okay 2")."""
    seen: dict[str, int] = {}
    out = []
    for element in elements:
        if element.ref is None:
            out.append(element)
            continue
        seen[element.name] = seen.get(element.name, 0) + 1
        name = element.name if seen[element.name] == 1 else f"{element.name} {seen[element.name]}"
        out.append(Element(**{**element.__dict__, "name": name}))
    return out
