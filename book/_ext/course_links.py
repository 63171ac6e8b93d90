"""Small fixes to the built pages: exercise buttons that point at the real notebooks, and two console
errors of the theme stack (pinned by jupyter-book 1) removed. Also the `{exercise}` role, and encrypted
kernels for the chapters the build executes.

`{exercise}`residual_add`` links to that exercise's page by its id, whatever its number: the pages are
`exercises/NN_<id>.ipynb`, and a renumbering changes no chapter. An id with no page stops the build.

`book/exercises` is a symlink to `exercises/` (Jupyter Book 1 only reads files under the book folder).
The theme builds its launch, repository and download URLs from `path_to_book` + page name, which for an
exercise page would be `book/exercises/NN_id.ipynb`: a symlink that GitHub and Colab do not follow.
This rewrites those URLs to `exercises/NN_id.ipynb`, the real file, and drops the Colab button of
Markdown chapters (Colab opens notebooks only).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from docutils import nodes
from sphinx.errors import ExtensionError
from sphinx.roles import XRefRole

EXERCISE_DIR = "exercises/"
EDITIONS = {"zh": "zh/"}
"""Each translated edition: its site folder beside the English one (the English site at /, the Chinese at /zh/),
and its exercise pages' folder under exercises/ (exercises/zh/NN_<id>.ipynb, scripts/translations writes them)."""
SWITCH_LABEL = {"en": "本页中文版", "zh": "This page in English"}


def edition(config) -> str:
    """The edition a build makes: 'zh' where Sphinx's language is Chinese, else 'en'."""
    return "zh" if str(getattr(config, "language", "") or "").lower().startswith("zh") else "en"


def exercise_folder(language: str) -> str:
    return EXERCISE_DIR + EDITIONS.get(language, "")


def exercise_docname(srcdir: Path, exercise_id: str, language: str = "en") -> str:
    """`/exercises/NN_<id>` (a document name from the book's root) for an exercise id; in a translated edition,
    its page there (`/exercises/zh/NN_<id>`)."""
    folder = exercise_folder(language)
    pages = sorted(Path(srcdir, folder).glob(f"[0-9][0-9]_{exercise_id}.ipynb"))
    if len(pages) != 1:
        raise ExtensionError(f"{{exercise}}`{exercise_id}`: no single page {folder}NN_{exercise_id}.ipynb "
                             f"(found {[p.name for p in pages]})")
    return f"/{folder}{pages[0].stem}"


def counterpart(pagename: str, language: str) -> str:
    """The same page in the other edition, as a URL relative to this page (English at the site's root, the
    Chinese edition at zh/)."""
    depth = pagename.count("/")
    if language == "en":
        other = pagename
        if pagename.startswith(EXERCISE_DIR):
            other = pagename.replace(EXERCISE_DIR, exercise_folder("zh"), 1)
        return "../" * depth + EDITIONS["zh"] + other + ".html"
    other = pagename.replace(exercise_folder("zh"), EXERCISE_DIR, 1)
    return "../" * (depth + 1) + other + ".html"


def link_other_edition(app, pagename: str, templatename: str, context: dict, doctree) -> None:
    """A line at the top of every page, linking the same page in the other language (tests/test_book.py follows
    each)."""
    if "body" not in context:
        return
    language = edition(app.config)
    href, lang = counterpart(pagename, language), "zh-CN" if language == "en" else "en"
    link = (f'<p class="course-edition-switch" lang="{lang}">'
            f'<a class="reference external" href="{href}">{SWITCH_LABEL[language]}</a></p>\n')
    context["body"] = link + context["body"]


class ExerciseRole(XRefRole):
    """`{exercise}`id`` or `{exercise}`text <id>``: a link to the exercise's page, its id as the text. It is
    resolved as `{doc}` is (the standard domain's `doc` reference), once the id is turned into the page."""

    def run(self):
        self.refdomain, self.reftype, self.classes = "std", "doc", ["xref", "std", "std-doc"]
        return self.create_non_xref_node() if self.disabled else self.create_xref_node()

    def process_link(self, env, refnode, has_explicit_title: bool, title: str, target: str) -> tuple[str, str]:
        return (title if has_explicit_title else target), exercise_docname(Path(env.srcdir), target,
                                                                          edition(env.config))


def encrypt_kernel_transport(app) -> None:
    """The chapters run in kernels that myst-nb starts with jupyter_client's default, `transport_encryption`
    'disabled', and myst-nb passes no configuration to the kernel manager. ipykernel 7.3 and later then
    warns, once per chapter, that the kernel talks over TCP without encryption. 'auto' has the manager
    provision CurveZMQ keys for every kernel whose kernelspec declares `supported_encryption: curve`
    (ipykernel's does): the traffic is encrypted and the kernel has nothing to warn about. Older
    jupyter_client releases have no such setting, and older kernels no such warning."""
    from jupyter_client.manager import KernelManager

    setting = KernelManager.class_traits().get("transport_encryption")
    if setting is not None:
        setting.default_value = "auto"


def _rewrite(value: Any, old: str, new: str) -> Any:
    if isinstance(value, str):
        return value.replace(old, new)
    if isinstance(value, list):
        return [_rewrite(v, old, new) for v in value]
    if isinstance(value, dict):
        return {k: _rewrite(v, old, new) for k, v in value.items()}
    return value


def _drop_colab_for_markdown(value: Any) -> Any:
    """Colab opens .ipynb only; a MyST Markdown chapter keeps its Binder button (Binder has jupytext)."""
    if isinstance(value, list):
        return [_drop_colab_for_markdown(v) for v in value
                if not (isinstance(v, dict) and "colab" in str(v.get("url", "")) and str(v["url"]).endswith(".md"))]
    if isinstance(value, dict):
        return {k: _drop_colab_for_markdown(v) for k, v in value.items()}
    return value


def point_exercises_at_repository(app, pagename: str, templatename: str, context: dict, doctree) -> None:
    if "header_buttons" in context:
        context["header_buttons"] = _drop_colab_for_markdown(context["header_buttons"])
    if not pagename.startswith(EXERCISE_DIR):
        return
    book = app.config.html_theme_options.get("path_to_docs", "").strip("/")
    if not book:
        return
    old, new = f"{book}/{EXERCISE_DIR}", EXERCISE_DIR
    if "header_buttons" in context:
        context["header_buttons"] = _rewrite(context["header_buttons"], old, new)


def default_theme_mode(app, pagename: str, templatename: str, context: dict, doctree) -> None:
    """pydata-sphinx-theme's layout reads `default_mode` from the page context, which sphinx-book-theme
    never sets: every page then logs "Got invalid theme mode" to the console."""
    context.setdefault("default_mode", "auto")


def drop_duplicate_scripts(app, pagename: str, templatename: str, context: dict, doctree) -> None:
    """sphinx-thebe 0.3 registers its inline script twice, which declares `const THEBE_JS_URL` twice:
    a page error in every browser. Keep the first copy of each identical script."""
    seen, unique = set(), []
    for script in context.get("script_files", []):
        attributes = getattr(script, "attributes", {}) or {}
        # The copies differ only in filename None against '' (inline scripts), so both count as ''.
        key = (str(getattr(script, "filename", script) or ""),
               tuple(sorted((k, str(v)) for k, v in attributes.items())))
        if key not in seen:
            seen.add(key)
            unique.append(script)
    if "script_files" in context:
        context["script_files"] = unique


def setup(app):
    encrypt_kernel_transport(app)
    app.add_role("exercise", ExerciseRole(innernodeclass=nodes.literal, warn_dangling=True))
    app.connect("html-page-context", default_theme_mode)
    # After sphinx-book-theme (priority 500) has added its buttons.
    app.connect("html-page-context", point_exercises_at_repository, priority=900)
    app.connect("html-page-context", drop_duplicate_scripts, priority=900)
    app.connect("html-page-context", link_other_edition, priority=950)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
