"""The materializer: artifact URIs in a final message -> browsable files on disk.

For each URI in the message, ``<data>/artifacts/<id>/`` receives
``index.html`` (a self-contained viewer), ``artifact.json`` (the raw row),
``data.csv`` for a spreadsheet and ``chart-<n>.png`` (2x) for each chart of a
chart artifact, drawn by headless Chromium. Without Chromium the PNGs are
skipped (``chart_png_skipped`` is logged and reported) and the rest is
written. Re-running is idempotent: a file whose bytes would not change is
not rewritten, and PNGs are drawn again only when the chart data changed or
an image is missing.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import os
import tempfile
import threading
from pathlib import Path

from minarad.artifacts.models import Artifact, find_uris
from minarad.artifacts.store import ArtifactStore
from minarad.artifacts.viewer import ECHARTS_VERSION, render_chart_sheet, render_viewer
from minarad.errors import Forbidden, MinaraError
from minarad.workspace.files import atomic_write

#: The file that remembers which chart data the PNGs were drawn from.
PNG_STAMP = ".png-source"


@dataclasses.dataclass
class Outcome:
    """What happened to one URI of the message."""

    uri: str
    id: str | None = None
    folder: str | None = None
    written: list[str] = dataclasses.field(default_factory=list)
    unchanged: list[str] = dataclasses.field(default_factory=list)
    skipped: list[dict] = dataclasses.field(default_factory=list)
    error: dict | None = None

    def to_dict(self) -> dict:
        """A JSON-ready mapping."""
        return dataclasses.asdict(self)


def materialize(store: ArtifactStore, message: str, out_root: str | os.PathLike, *,
                chromium: str | None, session: str | None = None, log=None) -> list[Outcome]:
    """Write the files of every artifact URI in ``message`` under ``out_root``.

    Args:
        store: the artifact store.
        message: the final text of a turn.
        out_root: ``<data>/artifacts``.
        chromium: the browser binary (:func:`minarad.artifacts.chromium.find_chromium`),
            or None to skip the PNGs.
        session: the session the message belongs to (for the hints of unknown ids).
        log: a loguru-style logger (``warning(fmt, *args)``); the default is loguru's.

    Returns:
        One :class:`Outcome` per distinct URI, in message order. A URI that does
        not resolve carries its structured error; the others are still written.
    """
    outcomes, found = [], []
    for uri in find_uris(message):
        outcome = Outcome(uri)
        outcomes.append(outcome)
        try:
            artifact = store.resolve(uri, session=session)
        except MinaraError as err:
            outcome.error = err.to_dict()
            continue
        folder = Path(out_root) / artifact.id
        outcome.id, outcome.folder = artifact.id, str(folder)
        if folder.is_symlink():
            outcome.error = Forbidden(f"{folder} is a symlink; minara does not follow links",
                                      code="symlink", id=artifact.id).to_dict()
            continue
        found.append((artifact, folder, outcome))
    charts = [item for item in found if item[0].type == "chart" and _pngs_stale(item[1], item[0])]
    # the browser starts and draws while the viewers are written
    with _browser_for(charts, chromium) as browser, _Writer(found) as viewers:
        if charts:
            _draw_charts(charts, browser, viewers, log or _default_log())
    return outcomes


class _Writer:
    """Writes the viewers and raw files in a thread; :meth:`wait` re-raises its error."""

    def __init__(self, found: list):
        self._found = found
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name="minara-materialize")

    def _run(self) -> None:
        try:
            for artifact, folder, outcome in self._found:
                _write_files(folder, artifact, outcome)
        except BaseException as exc:  # handed to the caller by wait()
            self._error = exc

    def __enter__(self) -> _Writer:
        self._thread.start()
        return self

    def __exit__(self, kind, *_exc) -> None:
        self._thread.join()
        if kind is None:
            self.wait()

    def wait(self) -> None:
        """Wait until every file is written (raising what the writer raised)."""
        self._thread.join()
        if self._error is not None:
            error, self._error = self._error, None
            raise error


@contextlib.contextmanager
def _browser_for(charts: list, chromium: str | None):
    """A started :class:`Browser` when charts need drawing and Chromium exists; else its absence
    (None) or the reason it did not start (a str)."""
    if not charts or chromium is None:
        yield None if chromium is None else "unused"
        return
    from minarad.artifacts.chromium import Browser, BrowserError

    try:
        browser = Browser(chromium)
    except BrowserError as err:
        yield err.message
        return
    with browser:
        yield browser


def _files_of(artifact: Artifact) -> dict[str, bytes]:
    raw = json.dumps(artifact.to_dict(), ensure_ascii=False, indent=2).encode() + b"\n"
    files = {"index.html": render_viewer(artifact), "artifact.json": raw}
    if artifact.type == "spreadsheet":
        files["data.csv"] = artifact.data["csvContent"].encode()  # type: ignore[index]  # checked
    return files


def _write_files(folder: Path, artifact: Artifact, outcome: Outcome) -> None:
    for name, data in _files_of(artifact).items():
        if _same_bytes(folder / name, data):
            outcome.unchanged.append(name)
        else:
            atomic_write(folder / name, data)
            outcome.written.append(name)


def _same_bytes(path: Path, data: bytes) -> bool:
    try:
        if os.lstat(path).st_size != len(data):
            return False
        return path.read_bytes() == data
    except OSError:
        return False


def _chart_stamp(artifact: Artifact) -> bytes:
    source = json.dumps(artifact.data, sort_keys=True).encode()
    return f"echarts {ECHARTS_VERSION} {hashlib.sha256(source).hexdigest()}\n".encode()


def _png_names(artifact: Artifact) -> list[str]:
    return [f"chart-{n}.png" for n in range(1, len(artifact.data["charts"]) + 1)]  # type: ignore[index]  # checked


def _pngs_stale(folder: Path, artifact: Artifact) -> bool:
    if not _same_bytes(folder / PNG_STAMP, _chart_stamp(artifact)):
        return True
    return not all((folder / name).is_file() for name in _png_names(artifact))


def _draw_charts(charts: list, browser, viewers: _Writer, log) -> None:
    viewers_ready = viewers.wait
    if browser is None or isinstance(browser, str):
        reason = browser or "no Chromium (setting chromium)"
        for artifact, _folder, outcome in charts:
            _skip(artifact, outcome, reason, log)
        return
    from minarad.artifacts.chromium import BrowserError

    try:
        if not _draw_together(browser, charts, viewers_ready):
            viewers_ready()
            for artifact, folder, outcome in charts:  # find which one is at fault
                _draw_one(browser, artifact, folder, outcome, log)
    except BrowserError as err:
        for artifact, _folder, outcome in charts:
            if not any(n in outcome.written for n in _png_names(artifact)):
                _skip(artifact, outcome, err.message, log)


def _skip(artifact: Artifact, outcome: Outcome, reason: str, log) -> None:
    log.warning("chart_png_skipped {}: {}", artifact.id, reason)
    outcome.skipped += [{"file": n, "reason": f"chart_png_skipped: {reason}"}
                        for n in _png_names(artifact)]


def _draw_together(browser, charts: list, viewers_ready) -> bool:
    """Draw every chart on one page (ECharts loads once); False if the page had errors.

    The images are saved once ``viewers_ready()`` returns, so each folder's
    files are listed in the same order however the two threads ran.
    """
    options = [o for artifact, _f, _o in charts for o in artifact.data["charts"]]
    with tempfile.TemporaryDirectory(prefix="minara-charts-") as tmp:
        sheet = Path(tmp) / "charts.html"
        sheet.write_bytes(render_chart_sheet(options))
        report = browser.open_page(sheet, capture=".chart")
    if report.errors or report.state != "ready" or len(report.images) != len(options):
        return False
    viewers_ready()
    images = iter(report.images)
    for artifact, folder, outcome in charts:
        _save_pngs(artifact, folder, outcome, [next(images) for _ in _png_names(artifact)])
    return True


def _draw_one(browser, artifact: Artifact, folder: Path, outcome: Outcome, log) -> None:
    report = browser.open_page(folder / "index.html", capture=".chart")
    names = _png_names(artifact)
    if report.errors or report.state != "ready" or len(report.images) != len(names):
        reason = "; ".join(e.splitlines()[0] for e in report.errors if e)
        _skip(artifact, outcome, reason or "the page drew no charts", log)
        return
    _save_pngs(artifact, folder, outcome, report.images)


def _save_pngs(artifact: Artifact, folder: Path, outcome: Outcome, images: list[bytes]) -> None:
    for name, image in zip(_png_names(artifact), images, strict=True):
        atomic_write(folder / name, image)
        outcome.written.append(name)
    atomic_write(folder / PNG_STAMP, _chart_stamp(artifact))


def _default_log():
    from loguru import logger

    return logger
