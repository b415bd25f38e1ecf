"""`rbdspy ui` answers offline: started with no network and no LiteLLM setting in its
environment, the MLflow UI it runs must serve HTTP 200 within 60 s (it used to hang forever on an
import-lock deadlock while LiteLLM tried to fetch its price list)."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request

import pytest


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.timeout(120)
def test_rbdspy_ui_serves_http_200_offline(tmp_path):
    port = _free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("LITELLM")}
    # Any attempt to reach the network goes to a closed local port: offline, and fast to fail.
    env.update(HTTP_PROXY="http://127.0.0.1:9", HTTPS_PROXY="http://127.0.0.1:9", NO_PROXY="127.0.0.1,localhost")
    env["MLFLOW_TRACKING_URI"] = f"sqlite:///{tmp_path / 'mlflow.db'}"
    server = subprocess.Popen(
        [sys.executable, "-m", "rbdspy.cli", "ui", "--port", str(port)],
        env=env,
        cwd=tmp_path,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        deadline, status = time.monotonic() + 60, None
        while time.monotonic() < deadline and status is None:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=5) as response:
                    status = response.status
            except OSError:
                assert server.poll() is None, "rbdspy ui exited before it served anything"
                time.sleep(1)
        assert status == 200, "rbdspy ui did not answer within 60 s"
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=30)
