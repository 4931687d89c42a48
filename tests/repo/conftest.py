"""Shared fixtures of the repository checks (tests/repo)."""
from ncqsimbuild import ncq_sim_dir  # noqa: F401  (a fixture, used by name)
