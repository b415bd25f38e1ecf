"""Words of a text, the one way rbdspy splits text into words (tasks, actions, names, lessons).

`words_of` keeps every word in order (lower case; punctuation and underscores as spaces; a word
joined by a hyphen is one word: a "non-living thing" is no "living thing"); `content_words` leaves
out English function words, which name nothing; `word_set` is the content words as a set.
Cached: the same actions and names are read at every step of an episode.

`script_words` is the one other form, for text in any language and any script: the hashing
embedder's features (a lesson in Greek has words too) and the defence's scan for words that mix
scripts (a Cyrillic letter inside a Latin word is one word, not a split).
"""

from __future__ import annotations

import re
from functools import lru_cache

_WORD = re.compile(r"[a-z0-9]+")
_SCRIPT_WORD = re.compile(r"\w+")
_HYPHEN = re.compile(r"(?<=[a-z0-9])-(?=[a-z0-9])")
# English function words: two names that differ only in these name the same thing.
FUNCTION_WORDS = frozenset(
    {"a", "an", "the", "to", "of", "in", "on", "into", "onto", "at", "from", "with", "and", "or", "for", "it", "its"}
)


@lru_cache(maxsize=16384)
def words_of(text: str) -> tuple[str, ...]:
    """Every word of `text`, in order, lower case ("Take the non-living thing." -> take, the,
    nonliving, thing)."""
    return tuple(_WORD.findall(_HYPHEN.sub("", str(text or "").lower())))


@lru_cache(maxsize=16384)
def content_words(text: str) -> tuple[str, ...]:
    """The words of `text` less English function words, in order."""
    return tuple(w for w in words_of(text) if w not in FUNCTION_WORDS)


def word_set(text: str) -> frozenset[str]:
    """The content words of `text`, as a set."""
    return frozenset(content_words(text))


def says(text: str, name: str) -> bool:
    """Whether `text` says `name`: its content words one after another, in order ("the box of
    chocolates" says "box chocolates"). Words of a name scattered over a text do not say it."""
    said, wanted = content_words(text), content_words(name)
    span = len(wanted)
    return span > 0 and any(said[i : i + span] == wanted for i in range(len(said) - span + 1))


def overlap(a: str, b: str) -> float:
    """The share of content words two texts have in common (Jaccard; 0 for two empty texts)."""
    left, right = word_set(a), word_set(b)
    return len(left & right) / len(left | right) if left | right else 0.0


def script_words(text: str) -> list[str]:
    """The words of `text` in any script, as written (letters, digits and underscores of every
    alphabet: "Straße", "ignоre" with a Cyrillic o)."""
    return _SCRIPT_WORD.findall(str(text or ""))
