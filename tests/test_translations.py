"""The Chinese edition keeps in step with the English: every catalogue entry translated and not fuzzy, the same
placeholders, one glossary, the notebooks' code the English code, and the language chosen as a user expects.

An English change that leaves its Chinese behind fails here, with the command that marks what to translate:
`scripts/translations update` (Babel and Sphinx's gettext extract the English again; a changed sentence becomes
`#, fuzzy`, a new one empty), then the entries it lists are translated.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import os
import re
import string
import subprocess
import sys
import tempfile
from functools import cache
from pathlib import Path

import nbformat
import pytest
import yaml
from babel.messages.pofile import read_po

from autograder.feedback import language
from autograder.feedback.wording import TEMPLATES, say, say_in
from autograder.notebook.translated import code_tokens, language_line, translated
from tests.conftest import ROOT

GLOSSARY = yaml.safe_load((ROOT / "autograder" / "locale" / "glossary.yml").read_text(encoding="utf-8"))
UPDATE = "run `scripts/translations update`, then translate the entries it lists"


@cache
def tool():
    """scripts/translations, as a module."""
    loader = importlib.machinery.SourceFileLoader("translations_tool", str(ROOT / "scripts" / "translations"))
    spec = importlib.util.spec_from_loader(loader.name, loader)
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


def catalog(path: Path):
    with path.open("rb") as f:
        return read_po(f)


def untranslated(template, po: Path) -> list[str]:
    """The English entries of `template` whose Chinese in `po` is missing, empty or fuzzy."""
    if not po.exists():
        return [f"{po.relative_to(ROOT)} does not exist"]
    translated_ = catalog(po)
    missing = []
    for message in template:
        if not message.id:
            continue
        found = translated_.get(message.id, context=message.context)
        if found is None or not found.string or found.fuzzy:
            state = "missing" if found is None else ("fuzzy" if found.fuzzy else "empty")
            missing.append(f"{state}: {message.context or ''} {str(message.id)[:80]!r}")
    return missing


def fields(text: str) -> list[str]:
    """A template's placeholders with their format specs, sorted."""
    return sorted(f"{name}:{spec}!{conv}" for _, name, spec, conv in string.Formatter().parse(text) if name is not None)


# --- the package's words -------------------------------------------------------------------------------------

def test_every_package_message_has_its_chinese():
    missing = untranslated(tool().package_template(), tool().PACKAGE_PO)
    assert not missing, f"{len(missing)} package messages without Chinese ({UPDATE}):\n" + "\n".join(missing[:40])


PLURAL = {"s", "plural"}
"""Fields that hold an English plural suffix ("" or "s"): Chinese has no plural, and its template may leave them out."""


def test_a_translated_template_has_the_placeholders_and_edges_of_its_english():
    wrong = []
    for message in catalog(tool().PACKAGE_PO):
        if not message.id or not message.string or not message.context:
            continue
        english = [f for f in fields(message.id) if f.split(":")[0] not in PLURAL or f in fields(message.string)]
        if english != fields(message.string):
            wrong.append(f"{message.context}: {fields(message.id)} != {fields(message.string)}")
        for edge in (message.id[:1], message.id[-1:]):  # a space may go (Chinese glues without), a line may not
            if edge == "\n" and edge not in (message.string[:1] + message.string[-1:]):
                wrong.append(f"{message.context}: the English starts or ends with a new line, the Chinese does not")
    assert not wrong, "\n".join(wrong)


def test_every_message_says_itself_in_chinese_with_sample_fields():
    """Each template, filled in Chinese with its own field names, formats without an error."""
    for message_id, english in TEMPLATES.items():
        sample = {name: "1" for _, name, _, _ in string.Formatter().parse(english) if name}
        try:
            say_in("zh", message_id, **{k: 1 if re.search(rf"\{{{k}:[^}}]*[gdef]", english) else v
                                       for k, v in sample.items()})
        except (KeyError, ValueError, IndexError) as e:
            pytest.fail(f"{message_id}: {type(e).__name__}: {e}")


def test_the_language_is_chosen_when_words_are_made(monkeypatch):
    monkeypatch.delenv(language.ENV, raising=False)
    english = say("points", score=1, max_score=2)
    assert english == "1/2 points."
    monkeypatch.setenv(language.ENV, "zh_CN.UTF-8")
    chinese = say("points", score=1, max_score=2)
    assert chinese != english and "1" in chinese and "2" in chinese and re.search(r"[\u4e00-\u9fff]", chinese)
    monkeypatch.setenv(language.ENV, "klingon")
    assert say("points", score=1, max_score=2) == english, "an unknown language is English"


@pytest.mark.parametrize("value, expected", [("zh", "zh"), ("zh_CN", "zh"), ("zh-Hans", "zh"), ("ZH_cn.utf8", "zh"),
                                             ("en", "en"), ("en_US", "en"), ("", None), ("fr", None)])
def test_a_language_is_known_by_its_usual_names(value, expected):
    assert language.known(value) == expected


def test_an_exercises_own_text_is_said_in_chinese_inside_a_template(monkeypatch):
    monkeypatch.setenv(language.ENV, "zh")
    text = "The input tensor `x` is not modified by forward or backward."
    assert language.sentence(text, "zh") != text
    assert language.sentence(text, "zh") in say("does not hold", failure=text, trial="t")


def test_where_a_check_failed_and_the_list_of_exercises_are_said_in_chinese(monkeypatch, capsys):
    """Two places that once joined English to Chinese: the trial a failed check names (", in " was written in the
    code) and `autograder list` (its title, columns and check names)."""
    from autograder import cli
    from autograder.feedback.text import _where
    from tests.test_zh_notebooks import english_lines

    monkeypatch.setenv("COURSE_LANGUAGE", "zh")
    where = _where("public/float32/cpu")
    assert where.startswith("，在场景") and ", in" not in where, where
    assert cli.main(["list"]) == 0
    said = capsys.readouterr().out
    assert "练习" in said and "检查项" in said and not english_lines(said), said
    monkeypatch.setenv("COURSE_LANGUAGE", "en")
    assert _where("public/float32/cpu") == ", in scenario 'public', float32 on cpu"


def test_a_catalogue_edited_after_its_compilation_is_read_from_its_po(tmp_path, monkeypatch):
    folder = tmp_path / "zh_CN" / "LC_MESSAGES"
    folder.mkdir(parents=True)
    po = folder / "autograder.po"
    po.write_text('msgid ""\nmsgstr "Content-Type: text/plain; charset=UTF-8\\n"\n\n'
                  'msgctxt "points"\nmsgid "{score:g}/{max_score:g} points."\nmsgstr "旧"\n', encoding="utf-8")
    (folder / "autograder.mo").write_bytes(language.compiled(po))
    po.write_text(po.read_text(encoding="utf-8").replace("旧", "新"), encoding="utf-8")
    os.utime(folder / "autograder.mo", (1, 1))
    monkeypatch.setattr(language, "LOCALE_DIR", tmp_path)
    language.translations.cache_clear()
    try:
        assert language.template("points", "{score:g}/{max_score:g} points.", "zh") == "新"
    finally:
        language.translations.cache_clear()


def test_the_command_line_and_a_bundle_take_a_language(tmp_path):
    from autograder.bundle.config import BundleConfig
    from autograder.bundle.source import ExportError

    assert BundleConfig(exercises=("leaf_sgd",), language="zh").language == "zh"
    with pytest.raises(ExportError):
        BundleConfig(exercises=("leaf_sgd",), language="fr")
    done = subprocess.run([sys.executable, "-m", "autograder", "check", "--language", "zh",
                           "exercises/03_residual_add.ipynb"], capture_output=True, text=True, cwd=ROOT,
                          env={**os.environ, language.ENV: ""}, timeout=300)
    assert "尚未作答" in done.stdout or "NotImplementedError" in done.stdout, done.stdout + done.stderr
    assert re.search(r"[\u4e00-\u9fff]{4}", done.stdout), done.stdout


# --- the book's pages and the notebooks -------------------------------------------------------------------

@cache
def book_templates() -> dict[str, object]:
    out = Path(tempfile.mkdtemp())
    tool().book_templates(out)
    return {pot.relative_to(out).with_suffix(".po").as_posix(): catalog(pot) for pot in sorted(out.rglob("*.pot"))}


def test_every_page_of_the_book_has_its_chinese():
    missing = []
    for page, template in book_templates().items():
        missing += [f"{page}: {m}" for m in untranslated(template, tool().BOOK_LOCALE / "zh_CN" / "LC_MESSAGES" / page)]
    assert not missing, f"{len(missing)} paragraphs of the book without Chinese ({UPDATE}):\n" + "\n".join(missing[:40])


def test_a_numbered_title_keeps_its_number_in_chinese():
    """Sphinx reads a translated title "4. ..." as a list and silently keeps the English: it is written "4\\. "."""
    wrong = [f"{po.name}: {m.string!r}" for po in (tool().BOOK_LOCALE / "zh_CN").rglob("*.po") for m in catalog(po)
             if m.id and m.string and re.match(r"\d+\. ", str(m.id)) and re.match(r"\d+\. ", m.string)]
    assert not wrong, "\n".join(wrong)


@pytest.mark.parametrize("stem", sorted(tool().notebook_sources()))
def test_every_notebook_has_its_chinese(stem):
    template = tool().notebook_template(stem, tool().notebook_sources()[stem])
    missing = untranslated(template, tool().NOTEBOOK_LOCALE / f"{stem}.po")
    assert not missing, f"{stem}: {len(missing)} entries without Chinese ({UPDATE}):\n" + "\n".join(missing[:40])


def test_the_chinese_notebooks_are_made_from_the_catalogues_as_they_are():
    stale = [str(path.relative_to(ROOT)) for path, text in tool().translated_notebooks().items()
             if not path.exists() or path.read_text(encoding="utf-8") != text]
    assert not stale, f"run `scripts/translations notebooks`: {stale}"


@pytest.mark.parametrize("english", sorted(p.relative_to(ROOT).as_posix() for stem in tool().notebook_sources().values()
                                           for p in stem))
def test_a_chinese_notebook_runs_the_english_code(english):
    """Token for token, but comments, the strings it says, and the setup cell's one line that sets the language."""
    source = nbformat.read(ROOT / english, as_version=4)
    path = ROOT / english
    chinese = nbformat.read(path.parent / "zh" / path.name, as_version=4)
    assert [c.cell_type for c in source.cells] == [c.cell_type for c in chinese.cells]
    for a, b in zip(source.cells, chinese.cells):
        if a.cell_type != "code":
            continue
        b_source = b.source.replace(language_line("zh"), "")
        b_source = re.sub(r"\nimport os\n*$", "\n", b_source) if "import os" not in a.source else b_source
        assert code_tokens(a.source) == code_tokens(b_source), f"{english}: a code cell differs:\n{b.source[:400]}"
        assert a.metadata.get("tags") == b.metadata.get("tags")


def test_translating_a_notebook_keeps_its_markers_and_refuses_nothing():
    """A made-up translation of every piece: the markers the grader and assign read stay, the code compiles."""
    for path in sorted((ROOT / "solutions").glob("[0-9][0-9]_*.ipynb")):
        nb = nbformat.read(path, as_version=4)
        zh = translated(nb, "zh", lambda english: english if re.match(r"\s*[fF]?[\"']", english)  # Python source
                        else "中文" + ("\n第二行" if "\n" in english else ""))
        for a, b in zip(nb.cells, zh.cells):
            if a.cell_type != "code":
                continue
            for marker in ("### BEGIN SOLUTION", "### END SOLUTION", "# Answer cell"):
                assert a.source.count(marker) == b.source.count(marker), (path.name, marker)
            if not re.search(r"^\s*[%!]", a.source, re.MULTILINE):
                compile(b.source, path.name, "exec")


# --- one glossary -------------------------------------------------------------------------------------------

def chinese_catalogues() -> list[Path]:
    return sorted([tool().PACKAGE_PO, *(tool().BOOK_LOCALE / "zh_CN").rglob("*.po"),
                   *tool().NOTEBOOK_LOCALE.glob("*.po")])


def _plain(text: str) -> str:
    """English prose without its code spans, placeholders and links' targets (code names are not terms)."""
    text = re.sub(r"`[^`]*`|\{\w*(?:[:!][^}]*)?\}", " ", text)  # code spans, a template's placeholders
    return re.sub(r"\]\([^)]*\)", "]", text)


def _unquoted(chinese: str) -> str:
    """Chinese prose without what it quotes (a report's own words, “…” or 「…」) and without code spans."""
    return re.sub(r"“[^”]*”|「[^」]*」|`[^`]*`", " ", chinese)


def test_one_glossary_everywhere():
    """Where the English says a term, its Chinese says the glossary's word; no Chinese outside a quotation uses a
    word the glossary avoids. Not held: an entry the same in both (a regular expression, a name), and English
    that uses the word in another sense (`unless`)."""
    wrong = []
    for po in chinese_catalogues():
        for message in catalog(po):
            if not message.id or not message.string or message.fuzzy or message.string == message.id:
                continue
            english, chinese = _plain(str(message.id)), message.string
            for term in GLOSSARY:
                said = english
                for phrase in term.get("unless", []):
                    said = re.sub(phrase, " ", said, flags=re.IGNORECASE)
                if re.search(rf"\b({term['en']})\b", said, re.IGNORECASE) and term["zh"] not in chinese:
                    wrong.append(f"{po.relative_to(ROOT)}: {term['en']!r} -> {term['zh']} missing in "
                                 f"{chinese[:120]!r}")
                for avoided in term.get("avoid", []):
                    if avoided in _unquoted(chinese).replace(term["zh"], " "):
                        wrong.append(f"{po.relative_to(ROOT)}: {avoided} (the glossary says {term['zh']}) in "
                                     f"{chinese[:120]!r}")
    assert not wrong, f"{len(wrong)} departures from autograder/locale/glossary.yml:\n" + "\n".join(wrong[:60])


def test_a_chinese_chart_draws_every_glyph(monkeypatch):
    """The class report's charts in Chinese: every label's glyphs are drawn (a CJK font, scripts/system-packages),
    not boxes; matplotlib warns of a missing glyph, and here a warning is an error."""
    import warnings

    from matplotlib import font_manager

    from autograder.reports import plots

    if not any(name in f.name for f in font_manager.fontManager.ttflist for name in ("WenQuanYi", "CJK", "Han Sans")):
        pytest.skip("no CJK font installed (scripts/system-packages installs fonts-wqy-microhei)")
    monkeypatch.setenv(language.ENV, "zh")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        svg = plots.score_distribution({"residual_add": [(6.0, "passed"), (0.0, "not_attempted")]},
                                       {"residual_add": 6.0}, {"residual_add": "3. `+=` 残差"})
        svg += plots.failing_checks([("前向传播", 3), ("梯度", 1)])
    assert svg.count("<path") > 50
