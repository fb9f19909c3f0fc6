"""An HTML page as a browser would look at it: every tag with its attributes (the reports'
tests read their pages with it)."""

from __future__ import annotations

from html.parser import HTMLParser


class Page(HTMLParser):
    """What a browser would look at: every tag with its attributes, and the text."""

    def __init__(self, document: str) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.feed(document)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))

    def all(self, tag: str) -> list[dict[str, str | None]]:
        return [attrs for name, attrs in self.tags if name == tag]

    def ids(self) -> list[str]:
        return [str(attrs["id"]) for _, attrs in self.tags if "id" in attrs]


def fetches_nothing(document: str) -> list[str]:
    """What in `document` would make a browser fetch something, or allow it to ([]: nothing):
    a page with a `default-src 'none'` policy and no script, link, image, frame, object,
    outside reference, import or font."""
    import re

    page = Page(document)
    found = []
    policy = [m for m in page.all("meta") if m.get("http-equiv") == "Content-Security-Policy"]
    if not policy or not str(policy[0]["content"]).startswith("default-src 'none'"):
        found.append("no Content-Security-Policy of default-src 'none'")
    for tag in ("script", "link", "img", "iframe", "object", "embed", "audio", "video"):
        if page.all(tag):
            found.append(f"a <{tag}>")
    # References stay inside the document: url(#id) and href="#id" only.
    found += [f"url({m}" for m in re.findall(r"url\((?!#)([^)]*)", document)]
    found += [f'href="{m}' for m in re.findall(r'href="(?!#)([^"]*)', document)]
    found += [f'src="{m}' for m in re.findall(r'\bsrc="([^"]*)', document)]
    found += [word for word in ("@import", "@font-face") if word in document]
    return found
