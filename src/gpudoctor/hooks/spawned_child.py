"""Imported first in every process the watched script starts with
multiprocessing's spawn (see hooks/spawn.py): the same lazy hooks as the
parent, and this process's findings reported when it exits."""

from __future__ import annotations

import atexit
import os

from gpudoctor.hooks.session import CHILD, ENV_ON, ENV_SUPERVISED, ENV_TARGET, env_flag, session


def _report() -> None:
    if os.getpid() != session.pid:
        return  # a forked copy of this process: the original reports
    try:
        import sys

        data = sys.modules.get("torch.utils.data")
        if data is not None and data.get_worker_info() is not None:
            return  # a DataLoader worker: its rank reports
        from gpudoctor.hooks.runner import report_at_exit

        report_at_exit(os.environ.get(ENV_TARGET, "a spawned process"), None)
    except Exception:  # noqa: BLE001 - a report must never change how the process ends
        pass


if env_flag(ENV_ON):
    from gpudoctor.hooks import spawn
    from gpudoctor.hooks.install import install_when_torch_imported

    session.role = CHILD
    if env_flag(ENV_SUPERVISED):  # in a rank's process group: the watchdog's SIGUSR1 reaches it too
        from gpudoctor.launch.rank import answer_stack_signal

        answer_stack_signal()
    spawn.install_command_line()
    install_when_torch_imported()
    atexit.register(_report)
