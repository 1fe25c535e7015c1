"""Per-turn handlers: what happens at a session's start and at each turn's end.

(Scheduled jobs, which run in the daemon on a timer, are another package.)

- :mod:`minarad.turns.soul` — SOUL.md change disclosure (``.soul-state.json``);
- :mod:`minarad.turns.bootstrap` — the two-turn onboarding handler;
- :mod:`minarad.turns.heartbeat` — HEARTBEAT.md status at every turn end;
- :mod:`minarad.turns.daily_log` — the per-session daily journal;
- :mod:`minarad.turns.turn_end` — runs the three above after every turn;
- :mod:`minarad.turns.harness` — reads agent-harness hook payloads.
"""
