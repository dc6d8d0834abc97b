"""`pipeweave._progress`: progress off a terminal (plain lines)."""

from __future__ import annotations


def test_progress_lines_off_a_terminal_are_about_ten_per_loop(capsys):
    """A 50-round loop logs 10 lines, a 12-step loop one per step (stderr is not a TTY under pytest)."""
    from pipeweave._progress import LineProgress

    for total, lines in ((50, 10), (12, 12), (400, 10)):
        bar = LineProgress(total, "boosting", unit="tree")
        for _ in range(total):
            bar.update()
        assert len(capsys.readouterr().err.splitlines()) == lines
