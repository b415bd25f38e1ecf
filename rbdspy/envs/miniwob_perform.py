"""How a web action is carried out on the page, with MiniWoB's own element actions, and which
actions a page lists.

Why MiniWoB's actions: `CLICK_ELEMENT` (the page's own `core.elementClick`), `PRESS_KEY` and
`TYPE_TEXT` (WebDriver key events) are what the package's agents use and what its pages are tested
with, so an action done here is what the page expects. Two things are done with Selenium itself:
choosing a list's option (`Select`, which a click on a closed list cannot do headless) and putting
the focus on an element before a key is pressed (a click would press a button).
"""

from __future__ import annotations

from typing import Any

from rbdspy.envs.miniwob_actions import (
    CLICK,
    FILL,
    PRESS,
    SELECT,
    WebAction,
    key_label,
    key_name,
    option_template,
    text_template,
    written,
)
from rbdspy.envs.miniwob_page import MAX_OPTIONS, Element, Page

_ELEMENT_JS = "return core.previousDOMInfo[arguments[0]];"


def option_of(element: Element, text: str) -> int | None:
    """The index of the option `text` names (any case; else the one option containing it), or None."""
    wanted = " ".join(str(text).split()).lower()
    options = [o.lower() for o in element.options]
    if wanted in options:
        return options.index(wanted)
    containing = [i for i, o in enumerate(options) if wanted and wanted in o]
    return containing[0] if len(containing) == 1 else None


def listed_actions(page: Page) -> list[str]:
    """Every action of the page, element by element in document order: a click for each; for a
    text field its `fill` template and `press Enter`; for a list each option (a template past
    `MAX_OPTIONS`). Disabled elements list nothing."""
    listed: list[str] = []
    for element in page.actionable:
        if element.disabled:
            continue
        if element.role == "combobox":
            listed += [written(SELECT, element.ref, option) for option in element.options[:MAX_OPTIONS]]
            if len(element.options) > MAX_OPTIONS:
                listed.append(option_template(element.ref))
            continue
        listed.append(written(CLICK, element.ref))
        if element.takes_text:
            listed += [text_template(element.ref), written(PRESS, element.ref, "Enter")]
    return listed


class Performer:
    """Carries out resolved web actions on a MiniWoB page session (`miniwob_browser.PageSession`)."""

    def __init__(self, session: Any):
        from miniwob.action import ActionSpaceConfig, ActionTypes
        from miniwob.constants import DEFAULT_ALLOWED_KEYS
        from selenium.common.exceptions import WebDriverException

        # What the browser raises when the page changed under an action (an element gone): the
        # adapter answers it as a wasted step.
        self.errors: tuple[type[Exception], ...] = (WebDriverException,)

        self._session = session
        self._types = ActionTypes
        self._config = ActionSpaceConfig(
            action_types=[ActionTypes.CLICK_ELEMENT, ActionTypes.PRESS_KEY, ActionTypes.TYPE_TEXT],
            allowed_keys=DEFAULT_ALLOWED_KEYS,
        )

    def key(self, key: str) -> str | None:
        """MiniWoB's name of `key` where `press` takes it, else None."""
        name = key_name(key)
        return name if name in self._config.allowed_keys else None

    def key_label(self, key: str) -> str:
        """The key as BrowserGym writes it ("<Enter>", "enter" -> "Enter"); an unknown key as written."""
        return key_label(key) if self.key(key) is not None else key

    def _ended(self) -> bool:
        return bool(self._session.get_metadata().get("done"))

    def _do(self, action_type: Any, **fields: Any) -> bool:
        """One MiniWoB action, unless the page has ended the episode (an earlier part of the same
        action may have: focusing a field ends focus-text); whether the episode has ended after it."""
        if self._ended():
            return True
        action = {"action_type": self._config.action_types.index(action_type), **fields}
        self._session.perform(action, self._config)
        return self._ended()

    def _click(self, ref: int) -> bool:
        return self._do(self._types.CLICK_ELEMENT, ref=ref)

    def _press(self, name: str) -> bool:
        return self._do(self._types.PRESS_KEY, key=self._config.allowed_keys.index(name))

    def perform(self, act: WebAction, element: Element) -> bool:
        """Does `act` on `element` (checked by the adapter: it exists and is of the right kind);
        whether the page ended the episode."""
        ref = element.ref
        if act.template == CLICK:
            return self._click(ref)
        if act.template == FILL:
            # BrowserGym's fill replaces the text; MiniWoB's typing appends: select what is there first.
            text = " ".join(str(act.value or "").splitlines())
            if self._click(ref):
                return True
            if element.value and self._press("C-a"):
                return True
            if not text:
                return self._press("<Backspace>") if element.value else False
            return self._do(self._types.TYPE_TEXT, text=text)
        if act.template == SELECT:
            from selenium.webdriver.support.select import Select

            index = option_of(element, act.value or "")
            Select(self._session.script(_ELEMENT_JS, ref)).select_by_index(index)
            return self._ended()
        if act.template == PRESS:
            self._session.script("core.previousDOMInfo[arguments[0]].focus();", ref)
            return self._press(self.key(act.value or ""))
        raise ValueError(f"no such web action template {act.template!r}")  # pragma: no cover - lex gives only these
