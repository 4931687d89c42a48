"""Where the repository is, for the repository checks."""
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
