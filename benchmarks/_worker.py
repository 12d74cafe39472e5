"""Contenders in processes of their own, timed in turn.

A benchmark that compares two frameworks in one process measures how they
disturb each other: TensorFlow's and PyTorch's thread pools compete for
the same cores, and each one's allocator sees the other's memory. A user
runs one of them. `Contender` starts this file as a subprocess with its
own environment (`KERAS_BACKEND`, thread settings), which imports only
what its step needs, builds it (`module:function(**kwargs)` returns a
function of no argument) and then runs it once per request, answering
with the step's wall and CPU seconds. `time_in_turn` times several such
processes round-robin, so that a noisy machine slows them all alike and
only one runs at a time.

Protocol, one JSON line each way: the parent writes the spec, the worker
answers `{"ready": true}` after the warm-up steps; then each line
`"step"` gets `[wall_seconds, cpu_seconds]`, and `"stop"` (or end of
input) ends it. Build errors come back as `{"error": "..."}`.
"""

import importlib
import json
import os
import subprocess
import sys
import time

_HERE = os.path.dirname(os.path.abspath(__file__))


class Contender:
    """One step function, built and run in a subprocess of its own.

    Args:
        target: `"module:function"`, a module of `benchmarks/` whose
            function takes `**kwargs` and returns the step to time.
        kwargs: JSON-serializable arguments of the function.
        env: Environment variables set for the subprocess (e.g.
            `{"KERAS_BACKEND": "torch"}`), on top of this process's; `None`
            removes one.
        warmup: Steps run before the worker reports ready.
    """

    def __init__(self, target, kwargs=None, env=None, warmup=3):
        self.target = target
        environment = {**os.environ, **(env or {})}
        self.process = subprocess.Popen(
            [sys.executable, os.path.abspath(__file__)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env={k: v for k, v in environment.items() if v is not None},
            cwd=_HERE,
            text=True,
        )
        spec = {"target": target, "kwargs": kwargs or {}, "warmup": warmup}
        # Workers build at the same time; `ready` waits for this one.
        self._send(spec)
        self._error = None
        self._ready = False

    def ready(self):
        """Waits for the build and warm-up: `None`, or the build's error."""
        if not self._ready:
            self._error = self._receive().get("error")
            self._ready = True
        return self._error

    def _send(self, message):
        self.process.stdin.write(json.dumps(message) + "\n")
        self.process.stdin.flush()

    def _receive(self):
        line = self.process.stdout.readline()
        if not line:
            return {"error": f"{self.target}: the worker exited"}
        return json.loads(line)

    def step(self):
        """Runs one step in the worker: `(wall seconds, CPU seconds)`."""
        self._send("step")
        return tuple(self._receive())

    def close(self):
        if self.process.poll() is None:
            self._send("stop")
            self.process.wait(timeout=60)


def time_in_turn(contenders, repeats):
    """`{name: (walls, cpus)}` of `repeats` steps of each, in turn.

    Contenders whose build failed are left out, with their error printed.
    """
    ready = {}
    for name, contender in contenders.items():
        error = contender.ready()
        if error:
            print(f"{name} skipped: {error}")
            contender.close()
        else:
            ready[name] = contender
    times = {name: ([], []) for name in ready}
    try:
        for _ in range(repeats):
            for name, contender in ready.items():
                wall, cpu = contender.step()
                times[name][0].append(wall)
                times[name][1].append(cpu)
    finally:
        for contender in ready.values():
            contender.close()
    return times


def _reply(protocol, message):
    protocol.write(json.dumps(message) + "\n")
    protocol.flush()


def _serve(protocol):
    spec = json.loads(sys.stdin.readline())
    try:
        module_name, function_name = spec["target"].split(":")
        sys.path.insert(0, _HERE)
        function = getattr(importlib.import_module(module_name), function_name)
        step = function(**spec["kwargs"])
        for _ in range(spec["warmup"]):
            step()
    except Exception as error:  # noqa: BLE001 (reported to the parent)
        _reply(protocol, {"error": repr(error)})
        return
    _reply(protocol, {"ready": True})
    for line in sys.stdin:
        if json.loads(line) != "step":
            break
        wall, cpu = time.perf_counter(), time.process_time()
        step()
        wall = time.perf_counter() - wall
        cpu = time.process_time() - cpu
        _reply(protocol, [wall, cpu])


if __name__ == "__main__":
    # Standard output carries the protocol: whatever the step prints goes
    # to standard error instead.
    protocol = sys.stdout
    sys.stdout = sys.stderr
    _serve(protocol)
