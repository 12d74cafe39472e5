"""The built site works opened from disk: every internal link is a file.

A browser that opens `site/index.html` as a file shows a folder listing for
a link to `guides/graphs/`; with `use_directory_urls: false` every link
names its page (`guides/graphs.html`).
"""

import os
import re
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote
from urllib.parse import urlsplit

import pytest

ROOT = Path(__file__).resolve().parents[2]


class _Links(HTMLParser):
    def __init__(self):
        super().__init__()
        self.links = []

    def handle_starttag(self, tag, attrs):
        for name, value in attrs:
            if name in ("href", "src") and value:
                self.links.append(value)


def internal_links(html):
    """The links of an HTML page that point into the site itself."""
    parser = _Links()
    parser.feed(html)
    links = []
    for link in parser.links:
        parts = urlsplit(link)
        if parts.scheme or parts.netloc or link.startswith(("#", "data:")):
            continue
        links.append(link)
    return links


def broken_links(site):
    """`(page, link)` for every internal link that does not name a file."""
    broken = []
    for page in sorted(site.rglob("*.html")):
        if page.name == "404.html":
            # Served by a web server for any missing path, so its links
            # are absolute (`/assets/...`); never opened from disk.
            continue
        for link in internal_links(page.read_text(encoding="utf-8")):
            path = unquote(urlsplit(link).path)
            if not path:
                continue
            target = (page.parent / path).resolve()
            if path.endswith("/") or not target.is_file():
                broken.append((page.relative_to(site).as_posix(), link))
    return broken


def test_broken_links_finds_links_to_folders(tmp_path):
    (tmp_path / "guides").mkdir()
    (tmp_path / "guides" / "trees.html").write_text("<p>trees</p>")
    (tmp_path / "index.html").write_text(
        '<a href="guides/trees.html#top">ok</a>'
        '<a href="guides/">folder</a>'
        '<img src="missing.png">'
        '<a href="https://keras.io/">external</a>'
        '<a href="#section">anchor</a>'
    )
    assert broken_links(tmp_path) == [
        ("index.html", "guides/"),
        ("index.html", "missing.png"),
    ]


def test_the_site_links_to_files():
    config = (ROOT / "mkdocs.yml").read_text()
    assert re.search(r"^use_directory_urls: false$", config, re.M)


@pytest.mark.slow
def test_built_site_links_resolve_to_files(tmp_path):
    site = tmp_path / "site"
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "mkdocs",
            "build",
            "--strict",
            "--quiet",
            "--config-file",
            str(ROOT / "mkdocs.yml"),
            "--site-dir",
            str(site),
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={
            **os.environ,
            "KERAS_BACKEND": "tensorflow",
            "NO_MKDOCS_2_WARNING": "1",
            "PYTHONPATH": str(ROOT),
        },
        timeout=900,
    )
    assert result.returncode == 0, result.stderr[-4000:]
    pages = list(site.rglob("*.html"))
    assert (site / "guides" / "graphs.html").is_file()
    assert len(pages) > 20
    # The home page links to the guides by file name.
    assert 'href="guides/graphs.html"' in (site / "index.html").read_text()
    assert broken_links(site) == []
