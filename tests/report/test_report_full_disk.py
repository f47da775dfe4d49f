"""A full disk while the report is drawn (issue 13, defect 4): `toolturn run` and `toolturn report`
say so in one line with exit status 2, like a full disk while the tables are written, and leave the
run's tables intact and no half report. The disk is made full for real where it matters: every
figure is saved to /dev/full, where each write fails with ENOSPC from the kernel, through
matplotlib's own file code."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.scenarios import TINY
from toolturn.cli import main

pytestmark = pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")


@contextmanager
def disk_full() -> Iterator[None]:
    """Within: every figure is saved to /dev/full, in the format its file name asks for."""
    from matplotlib.figure import Figure

    save = Figure.savefig

    def to_full_disk(self: Figure, fname: Any, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("format", Path(fname).suffix.lstrip(".") or "png")
        save(self, "/dev/full", *args, **kwargs)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(Figure, "savefig", to_full_disk)
        yield


def only_line(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    return err


def test_sim_run_says_the_report_was_not_written_and_keeps_the_tables(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    scenario, out = tmp_path / "tiny.toml", tmp_path / "run"
    scenario.write_text(TINY)
    with disk_full():
        assert main(["run", str(scenario), "--out", str(out)]) == 2
    assert only_line(capsys) == (
        f"toolturn run: error: {out / 'report'}: cannot write the report "
        "(No space left on device); "
        f"the run's tables were written to {out} (draw the report with: toolturn report {out})\n"
    )
    assert (out / "run.json").is_file() and not (out / "report").exists()
    assert sorted(path.name for path in tmp_path.iterdir()) == ["run", "tiny.toml"]
    assert main(["compare", str(out), str(out)]) == 0  # the tables are whole


def test_sim_report_exits_2_in_one_line_and_leaves_no_half_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    scenario, out = tmp_path / "tiny.toml", tmp_path / "run"
    scenario.write_text(TINY)
    assert main(["run", str(scenario), "--out", str(out), "--no-report"]) == 0
    capsys.readouterr()
    before = sorted(path.name for path in out.iterdir())
    with disk_full():
        assert main(["report", str(out)]) == 2
    assert only_line(capsys) == (
        f"toolturn report: error: {out / 'report'}: cannot write the report "
        "(No space left on device)\n"
    )
    assert sorted(path.name for path in out.iterdir()) == before
    assert main(["report", str(out)]) == 0  # with room again it draws the report
    assert (out / "report" / "report.html").is_file()
