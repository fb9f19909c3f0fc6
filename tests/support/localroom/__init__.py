"""Helpers for the local room tests: HTTP calls, the subprocess, a RoomCode double."""
