"""Which language the course speaks, and its words in that language.

English is the source: each message's English template is in wording.py and its areas (by message id), and each
exercise's own text is in its spec (autograder/exercises/<id>.py). Another language is a gettext catalogue,
`autograder/locale/<locale>/LC_MESSAGES/autograder.po`: a template by its message id as context (`pgettext`), an
exercise's text by its English (`gettext`). Babel extracts the catalogue (`scripts/translations`, with
extract.py's methods) and compiles it: the install compiles it to .mo; a source tree whose .mo is missing or older
than its .po is read from the .po itself, so a catalogue just edited is what is said.

The language is one value, read when words are made, never at import: `COURSE_LANGUAGE` in the environment (a
Chinese notebook's setup cell sets it, `--language` sets it for the command line and the workers it starts, a
platform bundle's configuration sets it for the grader). PyTorch's own messages are never translated: learners
search for them as they are.
"""

from __future__ import annotations

import functools
import gettext
import io
import os
import warnings
from pathlib import Path

ENV = "COURSE_LANGUAGE"
DOMAIN = "autograder"
LOCALE_DIR = Path(__file__).resolve().parent.parent / "locale"
LANGUAGES = {"en": None, "zh": "zh_CN"}
"""A language the course speaks -> its gettext locale (None: the source, English)."""
NAMES = {"en": "English", "zh": "简体中文"}
CJK_FONTS = ["WenQuanYi Micro Hei", "Noto Sans CJK SC", "Source Han Sans SC"]
"""Fonts with Chinese glyphs (and Latin ones) that a chart or figure in Chinese is drawn in, the first installed:
matplotlib's own DejaVu Sans has none. scripts/system-packages installs WenQuanYi Micro Hei."""
ALIASES = {"zh_cn": "zh", "zh-cn": "zh", "zh-hans": "zh", "zh_hans": "zh", "cn": "zh", "chinese": "zh",
           "english": "en", "en_us": "en", "en-us": "en", "en_gb": "en", "en-gb": "en"}


def known(value: str) -> str | None:
    """The language `value` names ('zh', 'zh_CN', 'zh-Hans', 'en', ...), or None if it names none."""
    text = value.strip().split(".")[0].lower()
    text = ALIASES.get(text, text)
    return text if text in LANGUAGES else None


def chosen(value: str | None = None) -> str:
    """The language to speak: `value` if given, else COURSE_LANGUAGE, else English. A value that names no language
    the course speaks is English (the command line refuses it first, in words)."""
    raw = os.environ.get(ENV, "") if value is None else value
    return (known(raw) or "en") if raw else "en"


@functools.lru_cache(maxsize=4)
def translations(language: str) -> gettext.NullTranslations:
    """The compiled catalogue of `language` (English, or a catalogue that is missing: no translation)."""
    locale = LANGUAGES.get(language)
    if locale is None:
        return gettext.NullTranslations()
    folder = LOCALE_DIR / locale / "LC_MESSAGES"
    po, mo = folder / f"{DOMAIN}.po", folder / f"{DOMAIN}.mo"
    if mo.is_file() and (not po.is_file() or mo.stat().st_mtime >= po.stat().st_mtime):
        with mo.open("rb") as f:
            return gettext.GNUTranslations(f)
    if po.is_file():
        try:
            return gettext.GNUTranslations(io.BytesIO(compiled(po)))
        except ImportError:  # a source tree never installed, without Babel: say so once, speak English
            warnings.warn(f"{mo} is missing and Babel is not installed to read {po.name}: run scripts/install",
                          stacklevel=2)
    return gettext.NullTranslations()


def compiled(po: Path) -> bytes:
    """A .po file compiled as .mo, in memory (Babel; fuzzy entries left out, as msgfmt leaves them)."""
    from babel.messages.mofile import write_mo
    from babel.messages.pofile import read_po

    with po.open("rb") as f:
        catalog = read_po(f)
    out = io.BytesIO()
    write_mo(out, catalog, use_fuzzy=False)
    return out.getvalue()


def template(message_id: str, english: str, language: str) -> str:
    """The template of `message_id` in `language` (its English where the catalogue has none)."""
    if language == "en":
        return english
    return translations(language).pgettext(message_id, english)


def sentence(english: str, language: str) -> str:
    """An exercise's own text (a check's name or description, a rule's words) in `language`."""
    if language == "en" or not english:
        return english
    return translations(language).gettext(english)
