"""The words the environments' actions are made of, read from each adapter's own forms: an action
written with these words alone names no thing of one episode (what the extractor metric counts as
a lesson's general words, `rbdspy.optimizers.literals`)."""

from __future__ import annotations

from rbdspy.core.words import words_of
from rbdspy.envs.scienceworld_grammar import FORMS as SCIENCEWORLD_FORMS
from rbdspy.envs.textworld_compass import TEXTWORLD_TEMPLATES, TWX_FORMS


def _words(forms) -> frozenset[str]:
    return frozenset(w for form in forms for w in words_of(form.replace("{}", " ")))


ACTION_WORDS: frozenset[str] = _words(SCIENCEWORLD_FORMS) | _words(TWX_FORMS) | _words(TEXTWORLD_TEMPLATES)
