"""One module per command group; cli/main.py registers them."""
