"""Every error the evaluation package raises on purpose, in one place.

Beam trees, calibration, interpretations, experiments and their reports, contrastive views and
example influence; each derives from :class:`amp.errors.AmpError`.
"""

from __future__ import annotations

from amp.errors import AmpError


class BeamTreeError(AmpError, ValueError):
    """Beams, steps and labels that do not fit together (counts, lengths or token ids differ)."""


class CalibrationError(AmpError, ValueError):
    """Calibration input that is malformed: bins out of range, a P(LF0) outside [0, 1], not a record."""


class InterpretationError(AmpError, ValueError):
    """Bad settings for an interpretation-level call."""


class ExperimentError(AmpError, ValueError):
    """A sweep configuration or sweep input that cannot be used; the message says what to change."""


class ReportError(ExperimentError):
    """A run, run manifest or report input that cannot be used."""


class ContrastError(AmpError, ValueError):
    """A pair score that cannot be contrasted (no steps, an unknown probability kind)."""


class InfluenceError(AmpError, ValueError):
    """A prompt whose examples' influence cannot be computed (no examples, no gold readings)."""


class SemanticEntropyError(AmpError, ValueError):
    """Outputs and weights that give no meaning distribution (lengths differ, a negative weight, no mass)."""


class AttributionError(AmpError, ValueError):
    """A contrastive attribution that cannot be computed: no local weights, readings that never part, bad settings."""


class BootstrapError(AmpError, ValueError):
    """Bootstrap settings or data that cannot give an interval (no data, a level outside (0, 1))."""
