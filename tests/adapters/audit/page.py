"""Reading the audit's HTML page in tests: every tag, and the text of each item of each
``<details>`` list (the page's lists of files), by the details' id."""

from __future__ import annotations

from html.parser import HTMLParser


class PageItems(HTMLParser):
    """Every tag seen, and the text of each item of each ``<details>`` list by its id; a
    parser that reads more of the page extends ``handle_starttag`` and calls this one."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.lists: dict[str, list[str]] = {}
        self.details: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        if tag == "details":
            self.details = str(dict(attrs).get("id"))
            self.lists[self.details] = []
        elif tag == "li" and self.details is not None:
            self.lists[self.details].append("")

    def handle_endtag(self, tag: str) -> None:
        if tag == "details":
            self.details = None

    def handle_data(self, data: str) -> None:
        if self.details is not None and self.lists[self.details]:
            self.lists[self.details][-1] += data
