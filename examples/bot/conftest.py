"""The bot's end-to-end test starts a real server with the client's test harness."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "clients/python/tests"))
