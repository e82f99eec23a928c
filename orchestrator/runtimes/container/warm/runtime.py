"""The container runtime for functions whose image a run calls more than once: each call a fresh
process in a warm container of that image (warm.pool), the cold path whenever that cannot be
exactly what a cold container would give (warm.plan) or the container turns out unfit.

A call that fails or is stopped for any reason but its function's own exit (a timeout, the output
cap, an engine error, Ctrl-C) discards its container, and so does one the kernel may have killed
(an exit code from 128: a signal, the OOM killer): the next call gets a fresh container.
"""

from __future__ import annotations

import time

import docker.errors
import requests.exceptions

from orchestrator.runtimes.container import live, runtime as container
from orchestrator.runtimes.container.warm.calls import NotClean, Started, call, finish, fits
from orchestrator.runtimes.container.warm.plan import NoWarm, Plan, Planned, plan
from orchestrator.runtimes.container.warm.pool import Turn, Warm, WarmPool
from orchestrator.runtimes.container.warm.spawn import Spawner
from orchestrator.runtimes.protocol import Bytes, Invocation, RunOutput, Runtime, StderrSink, StdoutSink
from orchestrator.runtimes.supervise.interrupts import SignalGuard
from orchestrator.settings import HelperPlace

ATTEMPTS = 2  # a container that ended on its own is replaced once; then the call runs cold


class WarmRuntime(Bytes):
    """Runs a call in a warm container of `pool`, else through `cold`."""

    streams_stdout = True

    def __init__(self, pool: WarmPool, cold: Runtime, spawner: Spawner | None = None, step: int | None = None,
                 planned: Planned | None = None, place: HelperPlace = HelperPlace()) -> None:
        """`place`: where the warm-call helper is had (settings.HelperPlace, read at the edge)."""
        self.pool = pool
        self.place = place
        self.cold = cold
        self.spawner = spawner  # with `step`: this call may have been started before its turn
        self.step = step
        self.planned = planned  # what the run worked out for this step at its start

    def run(self, invocation: Invocation, stdin: bytes, on_stderr: StderrSink | None = None,
            on_stdout: StdoutSink | None = None) -> RunOutput:
        self.pool.resume()  # this call missed the result cache: the run's warm containers are wanted
        found = self._plan(invocation)
        if found is None:
            return self.cold.run(invocation, stdin, on_stderr, on_stdout)
        started = time.monotonic()
        with self.pool.turn(found.key) as turn:  # counted before the claim: no later call takes this one's slot
            ahead = self.spawner.claim(self.step, invocation, turn) if self.spawner is not None and self.step is not None else None
            for attempt in range(ATTEMPTS + (ahead is not None)):
                live.refuse_if_cancelled()  # a cancelled call is not tried again
                done = self._attempt(found, invocation, stdin, on_stderr, on_stdout, turn, ahead if attempt == 0 else None)
                if self.spawner is not None:
                    self.spawner.kick()  # a container may be free for the next call now
                if done is not None:
                    self.pool.served += 1
                    stdout, stderr, code = done
                    return RunOutput(stdout=stdout, stderr=stderr, exit_code=code, duration=time.monotonic() - started)
        return self.cold.run(invocation, stdin, on_stderr, on_stdout)

    def _plan(self, invocation: Invocation) -> Plan | None:
        """The warm container `invocation` needs, or None: it runs cold. The step's plan from the
        run's start serves while the call is the same one (the same create request, /local of the
        same directory, whose size was checked then)."""
        if self.planned is not None and self.planned.for_call(invocation) is not None:
            return self.planned.plan if self.planned.fits else None
        found = plan(invocation, self.pool.engine.api, self.place)
        return None if isinstance(found, NoWarm) or not fits(invocation.local_dir) else found

    def _attempt(self, found: Plan, invocation: Invocation, stdin: bytes, on_stderr: StderrSink | None,
                 on_stdout: StdoutSink | None, turn: Turn, ahead: Started | None = None) -> tuple[bytes, str, int] | None:
        """One try in a warm container (the call's own process started ahead, if given); None when
        the function did not run (no container could be had, or it was gone or unfit): the
        container, if any, is discarded, and `turn` wants another before that."""
        api = self.pool.engine.api()
        with SignalGuard() as guard:
            warm: Warm | None
            if ahead is not None:
                warm = ahead.warm
            else:
                with guard.armed():
                    warm = self.pool.acquire(found)
            if warm is None:
                return None
            turn.have()
            if ahead is None and self.spawner is not None:
                self.spawner.kick()  # a slot this call left may hold the next call's process meanwhile
            done: tuple[bytes, str, int] | None = None
            try:
                live.lent(warm.container_id, self.pool.engine.remove_quietly)  # a server's call cancelled: it goes
                with guard.armed():
                    if ahead is not None:
                        done = finish(ahead, stdin, on_stderr, on_stdout)
                    else:
                        done = call(api, warm, found, invocation, stdin, on_stderr, on_stdout)
            except NotClean:
                pass  # the function did not run
            except (docker.errors.APIError, requests.exceptions.RequestException) as err:
                raise container.engine_error(invocation, err) from None
            finally:
                with guard.held():
                    if done is None:
                        turn.want()  # before its container goes: another try must find the slot free
                    live.given_back(warm.container_id)
                    fit = done is not None and done[2] < 128 and warm.channel.unfit is None
                    (self.pool.release if fit else self.pool.discard)(warm)
        return done
