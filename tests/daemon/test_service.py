"""The systemd user unit: rendering, and the file written into a tmp HOME."""

from pathlib import Path

from minarad.daemon.service import DEFAULT_EXEC, install_service, quote_arg, render_unit

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
