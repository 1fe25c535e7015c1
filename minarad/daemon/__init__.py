"""The minarad daemon: watch the workspace, commit every settled edit.

Modules: :mod:`.watcher` (watchdog events to paths), :mod:`.debounce`
(per-path quiet window and cap), :mod:`.core` (the stoppable loop),
:mod:`.notify` (systemd notify protocol), :mod:`.state` (state file and
single-instance lock), :mod:`.service` (the systemd user unit) and
:mod:`.main` (the ``minarad`` command).
"""
