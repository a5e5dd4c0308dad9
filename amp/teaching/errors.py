"""Every error the teaching package raises on purpose, in one place.

Demo packs, own templates, sentences and libraries, prompt files, class polls, lessons,
paraphrases and the classic sentences; each derives from :class:`amp.errors.AmpError`.
"""

from __future__ import annotations

from amp.errors import AmpError, PromptError


class DemoPackError(AmpError, ValueError):
    """A pack that cannot be written or read; the message names the file or entry at fault."""


class OwnTemplateError(AmpError, ValueError):
    """An own template that cannot be used; the message names the template and the place."""


class PromptFileError(PromptError):
    """A prompt file that cannot be imported; the message says what is wrong and where."""


class PollError(AmpError):
    """Base class of every poll error."""


class PollNotFoundError(PollError, LookupError):
    """No poll has this code (or the text is not a poll code at all)."""


class PollClosedError(PollError):
    """The poll is closed: its votes stay readable, but it takes no new ones."""


class DuplicateVoteError(PollError):
    """This voter already voted on this item (a second or replayed submission)."""


class ItemRevealedError(PollError):
    """The teacher revealed the model's answer on this item: its answers are locked (no new
    answer, no change)."""


class InvalidVoteError(PollError, ValueError):
    """A vote with a malformed field (type, range, voter id: :mod:`amp.teaching.voter`)."""


class InvalidPollError(PollError, ValueError):
    """A poll or poll item that cannot be created (no items, bad field, too long)."""


class PollStoreError(PollError, RuntimeError):
    """The poll database cannot be opened, read or written."""


class PackSelectionEmpty(AmpError):
    """The chosen sentences have no cached results to export."""


class ParaphraseError(AmpError, ValueError):
    """A paraphrase that cannot be produced (unknown surface, bad hole, bad reading index)."""


class ClassicsError(AmpError, ValueError):
    """A sentence of the recipe that is in no pool (the message names it)."""


class OwnSentenceError(AmpError, ValueError):
    """An own sentence that cannot be used; ``field`` names the field at fault (``"lf0"``, …)."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field


class OwnLibraryError(AmpError, ValueError):
    """The library file (or an import) cannot be read, is malformed or is over its bounds."""


class LessonPromptError(AmpError, ValueError):
    """A lesson's prompt choice that cannot be used (an unknown kind, a ratio outside [0, 1], …)."""
