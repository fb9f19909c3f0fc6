"""Helpers the tests share, imported by name: `from tests.support.<module> import ...`.

pyproject.toml puts the repository root on pytest's path (`pythonpath`) and imports test files
with `--import-mode=importlib`, so nothing here depends on where a test file lives.
"""
