"""The API reference lists every public symbol of the package."""

import importlib
import pkgutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
MODULES = (
    "layers",
    "trees",
    "graphs",
    "data",
    "constraints",
    "tuning",
    "callbacks",
    "distribute",
    "datasets",
    "export",
    "migrate",
    "testing",
    "plot",
)


def _public(module):
    names = getattr(module, "__all__", None)
    if names is not None:
        return names
    return [
        name
        for name, value in vars(module).items()
        if not name.startswith("_")
        and callable(value)
        and getattr(value, "__module__", None) == module.__name__
    ]


@pytest.mark.parametrize("name", MODULES)
def test_every_public_symbol_is_documented(name):
    module = importlib.import_module(f"keras_recurrent.{name}")
    page = (ROOT / "docs" / "api" / f"{name}.md").read_text()
    missing = []
    for symbol in _public(module):
        value = getattr(module, symbol)
        target = (
            f"::: {value.__module__}.{value.__qualname__}"
            if hasattr(value, "__qualname__")
            else f"`kr.{name}.{symbol}`"
        )
        if target not in page:
            missing.append(target)
    assert not missing, f"docs/api/{name}.md lacks {missing}"


def test_every_public_module_has_a_page():
    import keras_recurrent

    public = {
        module.name
        for module in pkgutil.iter_modules(keras_recurrent.__path__)
        if not module.name.startswith("_")
    }
    assert public == set(MODULES)
    navigation = (ROOT / "mkdocs.yml").read_text()
    for name in MODULES:
        assert f"kr.{name}: api/{name}.md" in navigation, name


def test_every_page_is_in_the_navigation():
    navigation = (ROOT / "mkdocs.yml").read_text()
    for page in sorted((ROOT / "docs").rglob("*.md")):
        relative = page.relative_to(ROOT / "docs").as_posix()
        if relative.startswith("design/"):
            continue
        assert relative in navigation, relative
