"""The comparison tool's own tests: plain pytest, no guest.  The tool's
modules live in guest-tests/ (compare/, workloads/, scenarios/)."""
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "guest-tests"))
