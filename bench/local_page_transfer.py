"""What a local room's edge sends a browser: each cached path's bytes on the wire, compressed as
CloudFront compresses them (local/edge_compression.py), against the bytes of the answer itself.

    .venv/bin/python bench/local_page_transfer.py

Starts `beekeeper local --demo` on free ports and asks the page (/room), the work page (/work),
and the shared state (/state) with the Accept-Encoding that
Chromium sends (`gzip, deflate, br, zstd`, over HTTPS and to a loopback address alike), with
gzip only, and with none; then the page in headless Chromium (Debian's, as the browser tests
drive it): its navigation's encoded and decoded body sizes. The figures depend on the room's
settings (the demo's) and the code, not on the machine.
"""

from __future__ import annotations

import tempfile
import urllib.request

from local_room import running_room

PATHS = ("/room", "/work", "/state")
VIEWERS = {
    "Chromium": "gzip, deflate, br, zstd",
    "gzip only": "gzip",
    "none": None,
}
CHROMIUM = "/usr/bin/chromium"


def wire(url: str, accept_encoding: str | None) -> tuple[int, str]:
    request = urllib.request.Request(url)  # noqa: S310 - the room's loopback address
    if accept_encoding is not None:
        request.add_header("Accept-Encoding", accept_encoding)
    with urllib.request.urlopen(request, timeout=30) as answer:  # noqa: S310
        return len(answer.read()), answer.headers.get("Content-Encoding", "none")


def in_chromium(url: str) -> tuple[int, int, str]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True)
        try:
            page = browser.new_page()
            response = page.goto(url)
            assert response is not None
            timing = page.evaluate(
                "() => { const n = performance.getEntriesByType('navigation')[0];"
                " return [n.encodedBodySize, n.decodedBodySize]; }"
            )
            return int(timing[0]), int(timing[1]), response.headers.get("content-encoding", "")
        finally:
            browser.close()


def main() -> None:
    with (
        tempfile.TemporaryDirectory() as config,
        running_room("transfer", ["--demo", "--demo-port", "0"], config) as room,
    ):
        print(f"| path | {' | '.join(VIEWERS)} |")
        print(f"|---|{'---:|' * len(VIEWERS)}")
        for path in PATHS:
            cells = []
            for accept in VIEWERS.values():
                size, coding = wire(room.base + path, accept)
                cells.append(f"{size:,} B ({coding})")
            print(f"| `{path}` | {' | '.join(cells)} |")
        encoded, decoded, coding = in_chromium(room.base + "/room")
        print(
            f"Chromium's first load of /room: {encoded:,} B encoded ({coding}), "
            f"{decoded:,} B decoded"
        )


if __name__ == "__main__":
    main()
