"""The `beekeeper` command line."""
