"""A full disk while `toolturn report BASE NEW --out DIR` writes its page (issue 29, section 5):
one line naming the folder and the reason, exit status 2, no traceback; no half page, no
staging folder, an older compare page in DIR kept whole, the run folders untouched. The disk is
made full for real: the page's file is a link to /dev/full, where each write fails with ENOSPC
from the kernel."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.helpers.scenarios import TINY
from toolturn.cli import main
from toolturn.report import compare_page

pytestmark = pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("runs")
    scenario = root / "tiny.toml"
    scenario.write_text(TINY)
    base, new = root / "base", root / "new"
    for out in (base, new):
        assert main(["run", str(scenario), "--out", str(out), "--no-report", "-q"]) == 0
    return base, new


def _listing(folder: Path) -> list[str]:
    return sorted(str(path.relative_to(folder)) for path in folder.rglob("*"))


@contextmanager
def _page_to_full_disk(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    real = compare_page.atomic_directory

    @contextmanager
    def staged_on_full_disk(destination: Path, *, replace: bool = False) -> Iterator[Path]:
        with real(destination, replace=replace) as staging:
            (staging / compare_page.COMPARE_PAGE).symlink_to("/dev/full")
            yield staging

    with monkeypatch.context() as patch:
        patch.setattr(compare_page, "atomic_directory", staged_on_full_disk)
        yield


def test_a_full_disk_is_one_line_exit_2_and_nothing_half_written(
    runs: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    base, new = runs
    before = _listing(base), _listing(new)
    out = tmp_path / "pages"
    capsys.readouterr()
    with _page_to_full_disk(monkeypatch):
        assert main(["report", str(base), str(new), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err == (
        f"toolturn report: error: {out}: cannot write the compare page "
        "(No space left on device)\n"
    )
    assert not out.exists() and list(tmp_path.iterdir()) == []
    assert (_listing(base), _listing(new)) == before


def test_a_full_disk_keeps_an_older_compare_page_whole(
    runs: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    base, new = runs
    out = tmp_path / "pages"
    assert main(["report", str(base), str(new), "--out", str(out)]) == 0
    page = (out / compare_page.COMPARE_PAGE).read_bytes()
    with _page_to_full_disk(monkeypatch):
        assert main(["report", str(base), str(new), "--out", str(out)]) == 2
    assert "cannot write the compare page" in capsys.readouterr().err
    assert sorted(path.name for path in tmp_path.iterdir()) == ["pages"]
    assert _listing(out) == [compare_page.COMPARE_PAGE]
    assert (out / compare_page.COMPARE_PAGE).read_bytes() == page
