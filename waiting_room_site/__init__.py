"""The waiting room page's files (package data)."""
