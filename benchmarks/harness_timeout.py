"""What `tasks run --task-timeout` costs per task: each task then runs in its own daemon thread.

Runs the same trivial agent over N tasks with and without a timeout, in this process, and
prints the ratio of the two wall times (and the per-task overhead). The agent does no work, so
this is the worst case: any real agent's own time dwarfs the thread's.

    .venv/bin/python benchmarks/harness_timeout.py [--tasks 5000] [--repeat 5]
"""

from __future__ import annotations

import argparse
import time
from typing import Any

from research_judge.harness import run_tasks


def agent(text: str) -> dict[str, Any]:
    return {"status": "final", "answer": text, "tool_calls": 0, "tools_used": []}


def best_of(repeat: int, tasks: list[dict[str, str]], timeout: float | None) -> float:
    best = float("inf")
    for _ in range(repeat):
        started = time.perf_counter()
        report = run_tasks(agent, tasks, timeout=timeout)
        best = min(best, time.perf_counter() - started)
        assert report.n_passed == len(tasks)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=5000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    tasks = [{"id": f"t{i}", "input": f"a{i}", "expected": f"a{i}"} for i in range(args.tasks)]
    best_of(1, tasks[:100], 30.0)  # warm-up
    inline = best_of(args.repeat, tasks, None)
    threaded = best_of(args.repeat, tasks, 30.0)
    per_task_us = (threaded - inline) / args.tasks * 1e6
    print(f"tasks: {args.tasks}, best of {args.repeat}")
    print(f"without --task-timeout: {inline:.3f} s")
    print(f"with --task-timeout:    {threaded:.3f} s")
    print(f"ratio {threaded / inline:.2f}x; overhead {per_task_us:.0f} us per task")


if __name__ == "__main__":
    main()
