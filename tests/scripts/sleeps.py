"""Never finishes on its own: a stuck job for --timeout to stop. Starts a child
process too, which must not outlive it."""

import subprocess
import sys
import time

child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
print("child", child.pid, flush=True)


def wait_for_data():
    time.sleep(600)


wait_for_data()
