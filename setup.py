"""The build compiles the package's translation catalogues (autograder/locale/*/LC_MESSAGES/*.po, Babel) into the
wheel's .mo files: they are not committed. Everything else is in pyproject.toml."""

from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py


class BuildWithCatalogues(build_py):
    def run(self):
        super().run()
        from babel.messages.mofile import write_mo
        from babel.messages.pofile import read_po

        for po in Path("autograder/locale").glob("*/LC_MESSAGES/*.po"):
            target = Path(self.build_lib) / po.with_suffix(".mo")
            target.parent.mkdir(parents=True, exist_ok=True)
            with po.open("rb") as f:
                catalog = read_po(f)
            with target.open("wb") as f:
                write_mo(f, catalog, use_fuzzy=False)


setup(cmdclass={"build_py": BuildWithCatalogues})
