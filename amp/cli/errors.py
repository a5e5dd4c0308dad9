"""Every error the command line raises on purpose, in one place.

A command turns each into one ``error:`` line and a non-zero exit (:func:`amp.cli.common.fail`);
each derives from :class:`amp.errors.AmpError`.
"""

from __future__ import annotations

from amp.errors import MetricError


class PredictionsError(MetricError):
    """A malformed line of a predictions file (``python -m amp metrics``); the message starts with
    its line number."""
