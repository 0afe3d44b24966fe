"""Start-up of a corpus script run by observer_inprocess.py: the capture's pieces toggled in it."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import observer_toggle  # noqa: E402

observer_toggle.start()
