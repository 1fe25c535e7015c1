"""Background and per-turn jobs that keep the agent's memory alive.

- :mod:`minarad.jobs.soul` — SOUL.md change disclosure (``.soul-state.json``);
- :mod:`minarad.jobs.bootstrap` — the two-turn onboarding handler;
- :mod:`minarad.jobs.heartbeat` — HEARTBEAT.md status at every turn end;
- :mod:`minarad.jobs.daily_log` — the per-session daily journal;
- :mod:`minarad.jobs.turn_end` — runs the three above after every turn;
- :mod:`minarad.jobs.harness` — reads agent-harness hook payloads.
"""
