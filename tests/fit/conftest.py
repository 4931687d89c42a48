"""The fit tests (tools/ncq-fit): ncqfit, ncqfit_sim and fit_compare are
importable by name (tools/ncq-fit is a package root, pyproject.toml)."""
