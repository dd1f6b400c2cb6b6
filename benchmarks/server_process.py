"""The fake OpenAI server in a child process, so its CPU never counts against the client's.

    with FakeServerProcess(latency=0.1) as server:
        ... OpenAIClient(..., base_url=server.base_url) ...
    server.stats  # the server's counters, read when it stopped

The child is ``python -m research_judge.testing.serve`` answering with
``judge_replies.BodyReplies`` (from each request body the pipeline and the bare loops send);
it listens on 127.0.0.1 only and exits when its stdin closes.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path
from types import TracebackType
from typing import Any

from judge_replies import ASK_LOG_ENV

BENCH_DIR = Path(__file__).resolve().parent
START_TIMEOUT = 20.0
STOP_TIMEOUT = 10.0


class FakeServerProcess:
    def __init__(
        self,
        *,
        latency: float = 0.0,
        max_concurrent: int | None = None,
        retry_after: float | None = None,
        ask_log: Path | None = None,
        max_seconds: float = 1800.0,
    ) -> None:
        self.args = [
            sys.executable,
            "-m",
            "research_judge.testing.serve",
            "--responder",
            "judge_replies:BodyReplies",
            "--latency",
            str(latency),
            "--max-seconds",
            str(max_seconds),
        ]
        if max_concurrent is not None:
            self.args += ["--max-concurrent", str(max_concurrent)]
        if retry_after is not None:
            self.args += ["--retry-after", str(retry_after)]
        self.ask_log = ask_log
        self.base_url = ""
        self.stats: dict[str, Any] = {}
        self._proc: subprocess.Popen[str] | None = None

    def __enter__(self) -> FakeServerProcess:
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(BENCH_DIR), env.get("PYTHONPATH")]))
        if self.ask_log is not None:
            env[ASK_LOG_ENV] = str(self.ask_log)
        self._proc = subprocess.Popen(
            self.args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env
        )
        line = _readline_within(self._proc, START_TIMEOUT)
        if not line:
            self._kill()
            raise RuntimeError(f"fake server did not start: {' '.join(self.args)}")
        self.base_url = json.loads(line)["base_url"]
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        proc = self._proc
        if proc is None:
            return
        try:
            # communicate() closes stdin: at end of file the server stops and prints its counters.
            out, _ = proc.communicate(timeout=STOP_TIMEOUT)
        except subprocess.TimeoutExpired:
            self._kill()
            return
        for line in out.splitlines():
            if line.startswith('{"stats"'):
                self.stats = json.loads(line)["stats"]

    def _kill(self) -> None:
        if self._proc is not None and self._proc.poll() is None:
            self._proc.kill()
            self._proc.wait()


def _readline_within(proc: subprocess.Popen[str], timeout: float) -> str:
    """First stdout line of ``proc``, or "" if none comes within ``timeout`` seconds."""
    assert proc.stdout is not None
    stdout = proc.stdout
    box: list[str] = []
    reader = threading.Thread(target=lambda: box.append(stdout.readline()), daemon=True)
    reader.start()
    reader.join(timeout)
    return box[0] if box else ""
