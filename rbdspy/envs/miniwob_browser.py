"""The browser MiniWoB++ pages run in: Debian's Chromium through its chromedriver, headless, one per
adapter, started once and reused for every episode and task type, and gone when its owner is.

Why this module: the `miniwob` package's `SeleniumInstance` does the page work (seeding, starting an
episode, reading the DOM and the reward), but it starts Chrome through Selenium's driver manager,
which looks on the network for a driver, and it leaves the browser running when the Python process
dies. Here `PageSession` is that instance with three things changed:

- the browser and the driver are given by path (`/usr/bin/chromium`, `/usr/bin/chromedriver`), and a
  missing one is one line naming the Debian packages to install, before any task;
- the driver and everything it starts run in a process group led by a small watchdog process that
  holds the read end of a pipe whose write end only this process has: when this process ends, by
  `close()`, a normal exit or SIGKILL, the pipe reaches end of file and the watchdog kills the group
  (a `PR_SET_PDEATHSIG` would follow the thread that started the driver, not the process, and the
  browser's own children would not get it);
- every episode starts with the page's timer lifted (`core.EPISODE_MAX_TIME`, 10 s on most pages,
  after which the page ends the episode and discounts its reward by the time taken): a step of a
  small LM takes seconds, and the adapter reads the raw reward anyway.

A fork of this process without exec (multiprocessing's "fork") keeps the pipe open too: the browser
then lives until the fork ends as well.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

BROWSER = "/usr/bin/chromium"
DRIVER = "/usr/bin/chromedriver"
INSTALL = "apt-get install chromium chromium-driver"
# The page's episode timer, lifted: one day in ms (setTimeout takes at most 2**31 - 1 ms; more fires at once).
LIFTED_MS = 24 * 3600 * 1000
# Headless, no sandbox (CI runs as root in a container), nothing fetched in the background.
BROWSER_ARGS = (
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-extensions",
    "--disable-sync",
    "--no-first-run",
    "--no-default-browser-check",
)
# The watchdog: it waits for end of file on its stdin (the parent's pipe), then kills its own
# process group, which holds the driver and the browser (and itself).
_WATCHDOG = "import os,signal,sys\nsys.stdin.buffer.read()\nos.killpg(0, signal.SIGKILL)"

# Reads what MiniWoB's DOM snapshot (`core.getDOMInfo`, whose elements `core.previousDOMInfo` holds by
# ref) leaves out and an agent needs: a field's label, a disabled state, a list's options.
_EXTRAS_JS = """
var out = {};
for (var ref in core.previousDOMInfo) {
  var el = core.previousDOMInfo[ref], info = {};
  if (!el || !el.getAttribute) continue;
  var label = el.getAttribute('aria-label') || el.getAttribute('placeholder') || el.getAttribute('title');
  if (!label && el.labels && el.labels.length) label = el.labels[0].innerText;
  if (label) info.label = String(label).trim();
  if (el.getAttribute('role')) info.role = el.getAttribute('role');
  if (el.getAttribute('name')) info.name = el.getAttribute('name');
  if (el.disabled) info.disabled = true;
  if (el.readOnly) info.readonly = true;
  if (el.hasAttribute('tabindex') || el.isContentEditable) info.focusable = true;
  if (el.tagName === 'SELECT') {
    info.options = Array.from(el.options).map(function (o) { return o.text.trim(); });
    info.selected = Array.from(el.selectedOptions).map(function (o) { return o.text.trim(); });
    info.multiple = el.multiple;
  }
  if (Object.keys(info).length) out[ref] = info;
}
return out;
"""


class BrowserMissing(RuntimeError):
    """Chromium or its driver is not installed (or not where it was said to be)."""


def check_installed(browser: str = BROWSER, driver: str = DRIVER) -> tuple[str, str]:
    """The browser's and the driver's paths, found; a `BrowserMissing` in one line naming the
    packages to install otherwise."""
    found = {what: shutil.which(path) for what, path in (("browser", browser), ("driver", driver))}
    missing = [f"{what} {path!r}" for (what, path) in (("browser", browser), ("driver", driver)) if not found[what]]
    if missing:
        raise BrowserMissing(
            f"MiniWoB++ pages run in Chromium, and no {' nor '.join(missing)} was found: install "
            f"Debian's packages ({INSTALL})"
        )
    return str(found["browser"]), str(found["driver"])


class Watchdog:
    """A process that leads a process group and kills it when this process ends (see the module
    docstring). `pgid` is the group the driver joins."""

    def __init__(self):
        read, self._write = os.pipe()  # the write end is not inherited by any child (O_CLOEXEC)
        try:
            self._process = subprocess.Popen(
                [sys.executable, "-I", "-S", "-c", _WATCHDOG], stdin=read, process_group=0, close_fds=True
            )
        finally:
            os.close(read)
        self.pgid = self._process.pid

    def members(self) -> list[int]:
        """The live processes of the group, the watchdog included."""
        return group_members(self.pgid)

    def release(self, timeout: float = 5.0) -> None:
        """Ends the group now (idempotent): closes the pipe and waits for the watchdog."""
        if self._write is not None:
            os.close(self._write)
            self._write = None
        try:
            self._process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:  # pragma: no cover - a watchdog that does not die
            os.killpg(self.pgid, signal.SIGKILL)
            self._process.wait(timeout=timeout)


def group_members(pgid: int) -> list[int]:
    """The live (not zombie) processes whose process group is `pgid`, read from /proc."""
    members = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat.rpartition(")")[2].split()  # after "pid (comm)": state, ppid, pgrp, ...
        if len(fields) > 2 and fields[0] != "Z" and int(fields[2]) == pgid:
            members.append(int(entry.name))
    return members


def _page_session_class():
    """`PageSession`, defined on first use: it subclasses the `miniwob` package's instance, which is
    imported only when an adapter is built (`import rbdspy.envs` works without the package)."""
    from miniwob.fields import get_field_extractor
    from miniwob.selenium_instance import DEFAULT_BASE_URL, SeleniumInstance
    from selenium import webdriver
    from selenium.common.exceptions import WebDriverException
    from selenium.webdriver.chrome.service import Service

    class PageSession(SeleniumInstance):
        """MiniWoB's `SeleniumInstance` on a browser started by path in a watched process group, able
        to open another task's page, its timer lifted at the start of every episode."""

        def __init__(self, subdomain: str, *, browser: str, driver: str):
            super().__init__(index=0, subdomain=subdomain, headless=True)
            self.subdomain = subdomain
            self.record_screenshots = False  # the adapter reads the DOM, never pixels
            self._browser, self._driver_path = browser, driver
            self.watchdog: Watchdog | None = None

        def create_driver(self) -> None:
            options = webdriver.ChromeOptions()
            options.binary_location = self._browser
            for argument in BROWSER_ARGS:
                options.add_argument(argument)
            self.watchdog = Watchdog()
            service = Service(
                executable_path=self._driver_path,
                log_output=subprocess.DEVNULL,
                popen_kw={"process_group": self.watchdog.pgid},
            )
            try:
                self.driver = webdriver.Chrome(service=service, options=options)
            except WebDriverException as error:
                self.watchdog.release()
                first = (getattr(error, "msg", None) or str(error)).strip().splitlines()[0]
                raise BrowserMissing(
                    f"Chromium did not start ({first}); reinstall Debian's packages ({INSTALL})"
                ) from None
            self.driver.implicitly_wait(0)
            self._load(self.url)

        def _load(self, url: str) -> None:
            self.driver.get(url)
            for _ in range(100):  # the sync screen is up once the page's scripts ran (at most ~5 s)
                if self.driver.execute_script("return typeof core !== 'undefined' && core.cover_div !== null"):
                    break
                time.sleep(0.05)
            else:
                raise RuntimeError(f"the MiniWoB page {url} did not load")
            self.inner_width, self.inner_height = self.driver.execute_script(
                "return [window.innerWidth, window.innerHeight];"
            )

        def open(self, subdomain: str) -> None:
            """Shows `subdomain`'s page (a no-op where it is already shown)."""
            if subdomain == self.subdomain:
                return
            self.url = f"{DEFAULT_BASE_URL}{subdomain}.html"
            self.field_extractor = get_field_extractor(subdomain)
            self.subdomain = subdomain
            self._load(self.url)

        def begin_task(self, seed: Any = None) -> None:
            self.driver.execute_script(f"core.EPISODE_MAX_TIME = {LIFTED_MS};")
            super().begin_task(seed=seed)

        def episode_max_time(self) -> int:
            """The page's episode timer now, in ms (`LIFTED_MS` once an episode has begun)."""
            return int(self.driver.execute_script("return core.EPISODE_MAX_TIME;"))

        def extras(self) -> dict[str, dict]:
            """What the last DOM snapshot leaves out, by ref (`_EXTRAS_JS`)."""
            return self.driver.execute_script(_EXTRAS_JS) or {}

        def script(self, code: str, *args: Any) -> Any:
            return self.driver.execute_script(code, *args)

        def close(self) -> None:
            driver = getattr(self, "driver", None)
            if driver is not None:
                with contextlib.suppress(Exception):  # a browser already gone: the watchdog ends the rest
                    driver.quit()
                del self.driver
            if self.watchdog is not None:
                self.watchdog.release()
            self.died = True

    return PageSession


def start_session(subdomain: str, *, browser: str = BROWSER, driver: str = DRIVER) -> Any:
    """A started `PageSession` showing `subdomain`'s page: the browser found first (a
    `BrowserMissing` naming the packages otherwise), then started in its watched group."""
    browser, driver = check_installed(browser, driver)
    session = _page_session_class()(subdomain, browser=browser, driver=driver)
    session.start()  # not threaded: the package's instance makes start() create the driver
    return session
