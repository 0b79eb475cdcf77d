"""Ctrl-C and SIGTERM stop every command the same way, however it was started.

A job a shell script starts in the background inherits SIGINT *ignored*, and Python then installs no
KeyboardInterrupt handler: `analyze observe … &` would run to its end whatever `kill -INT` says. SIGTERM's
default action ends the process at once, between two writes. While a command runs, both raise
KeyboardInterrupt in the main thread instead, so the command's own clean-up runs (a log closed on a
whole row, a partial summary said) and `main` exits 130 with one line. A command that wants to stop
differently (the proxy prints its own closing line) installs its own handlers over these.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable
from types import FrameType
from typing import Any


def _interrupt(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt(f"signal {signum}")


def stop_on_signals() -> Callable[[], None]:
    """Install the handlers (main thread only; a handler the embedding program chose is left alone) and
    return what puts the previous ones back."""
    if threading.current_thread() is not threading.main_thread():
        return lambda: None
    previous: dict[signal.Signals, Any] = {}  # signal → the handler it had
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        previous[signal.SIGINT] = signal.signal(signal.SIGINT, signal.default_int_handler)
    if signal.getsignal(signal.SIGTERM) is signal.SIG_DFL:
        previous[signal.SIGTERM] = signal.signal(signal.SIGTERM, _interrupt)

    def restore() -> None:
        for sig, handler in previous.items():
            signal.signal(sig, handler)

    return restore


__all__ = ["stop_on_signals"]
