"""The systemd user unit: rendering, the file written into a tmp HOME, systemd-analyze."""

from pathlib import Path

import pytest

from minarad.daemon.service import (DEFAULT_EXEC, DETACHED_RECORD, UNIT_NAME, WANTS_DIR,
                                    disable_by_hand, find_minarad, install_service, quote_arg,
                                    render_unit, stop_detached)

REPO = Path(__file__).resolve().parents[2]


def test_repository_unit_is_the_rendered_template():
    assert (REPO / "systemd" / "minarad.service").read_text() == render_unit(DEFAULT_EXEC, None)


def test_unit_is_type_notify_with_watchdog_restart_and_the_right_exec_start(tmp_path):
    text = render_unit("/opt/minara env/bin/minarad", tmp_path / "my ws")
    lines = text.splitlines()
    for wanted in ("Type=notify", "Restart=on-failure", "WatchdogSec=60s",
                   "NoNewPrivileges=yes", "WantedBy=default.target"):
        assert wanted in lines
    exec_start = next(line for line in lines if line.startswith("ExecStart="))
    assert exec_start == f'ExecStart="/opt/minara env/bin/minarad" --workspace "{tmp_path}/my ws"'


def test_percent_and_dollar_are_escaped_except_for_the_default_specifier():
    assert quote_arg("/a%b$c") == "/a%%b$$c"
    assert "ExecStart=%h/.local/bin/minarad\n" in render_unit(DEFAULT_EXEC, None)


def test_install_without_systemd_lists_the_commands(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path / "empty-bin"))
    report = install_service(tmp_path / "ws", unit_dir=tmp_path / "units",
                             exec_path="/usr/bin/minarad")
    unit = tmp_path / "units" / "minarad.service"
    assert unit.is_file() and report.installed and not report.systemd
    assert report.to_run == ["systemctl --user daemon-reload",
                             "systemctl --user enable --now minarad.service"]
    assert report.exec_start == f"/usr/bin/minarad --workspace {tmp_path / 'ws'}"


def _verify(unit: Path, home: Path):
    """``systemd-analyze verify`` on ``unit`` (skips where it cannot run)."""
    import os
    import shutil
    import subprocess

    if shutil.which("systemd-analyze") is None:
        pytest.skip("systemd-analyze is not installed (Debian's systemd package; .ci/run "
                    "installs it)")
    done = subprocess.run(["systemd-analyze", "verify", str(unit)], capture_output=True,
                          text=True, env={**os.environ, "HOME": str(home)}, timeout=120)
    if "Failed to initialize manager" in done.stderr or "Failed to connect" in done.stderr:
        pytest.skip(f"systemd-analyze cannot run here: {done.stderr.strip()}")
    return done


def test_installed_unit_passes_systemd_analyze_verify(tmp_path):
    report = install_service(tmp_path / "my ws", start=False, unit_dir=tmp_path / "units",
                             exec_path=find_minarad())
    done = _verify(Path(report.unit), tmp_path)
    assert (done.returncode, done.stderr) == (0, ""), done.stderr


def test_repository_unit_passes_systemd_analyze_verify(tmp_path):
    (tmp_path / ".local" / "bin").mkdir(parents=True)
    (tmp_path / ".local" / "bin" / "minarad").symlink_to(find_minarad())  # %h/.local/bin
    (tmp_path / "units").mkdir()
    unit = tmp_path / "units" / "minarad.service"
    unit.write_text((REPO / "systemd" / "minarad.service").read_text())
    done = _verify(unit, tmp_path)
    assert (done.returncode, done.stderr) == (0, ""), done.stderr


def test_verify_catches_a_broken_unit(tmp_path):
    unit = tmp_path / "minarad.service"
    unit.write_text(render_unit(find_minarad(), tmp_path).replace("Type=notify", "Type=nope"))
    done = _verify(unit, tmp_path)
    assert "Type" in done.stderr or "type" in done.stderr


def test_disable_by_hand_removes_only_the_wants_link(tmp_path):
    units = tmp_path / "units"
    install_service(tmp_path / "ws", start=False, unit_dir=units, exec_path="/usr/bin/minarad")
    assert disable_by_hand(units) is None
    link = units / WANTS_DIR / UNIT_NAME
    link.parent.mkdir()
    link.symlink_to(units / UNIT_NAME)
    assert disable_by_hand(units) == link
    assert not link.is_symlink() and (units / UNIT_NAME).is_file()


def test_stop_detached_signals_no_process_that_is_not_the_workspace_daemon(store, tmp_path):
    import json
    import subprocess

    other = subprocess.Popen(["sleep", "300"])
    try:
        state = tmp_path / "state"
        state.mkdir()
        (state / DETACHED_RECORD).write_text(json.dumps({"pid": other.pid,
                                                         "workspace": str(store.root)}))
        assert stop_detached(state) is None
        assert other.poll() is None  # still running: it holds no instance lock
        assert not (state / DETACHED_RECORD).exists()
    finally:
        other.kill()
        other.wait()


def test_stop_detached_without_a_record_does_nothing(tmp_path):
    assert stop_detached(tmp_path) is None
