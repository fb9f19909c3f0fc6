"""How every browser test starts Debian's chromium: the one path and the flags it needs here.

Without the background-networking flags Chromium keeps trying hosts this machine can not reach.
"""

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-sync",
]
