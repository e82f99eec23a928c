"""Warm containers: one sandboxed container per image serves every call of that image in a run,
each call a fresh process in it (plan: which calls may; pool: the containers; channel: the stream
calls go over; calls: one call; spawn: the next call's process started before its turn; runtime:
the Runtime; helper: the static PID 1; local: /local per call; what a killed fnrun left behind
is swept by runtimes.container.orphans). Images of fnrun's Python SDK fork each call from a fork server (functions/sdk/zygote.py).
Whether a run uses them at all is the run's decision (--no-warm, FNRUN_WARM: orchestrator.settings)."""
