"""Every error the detection package raises on purpose, in one place.

Detection data that cannot be built (too few sentences for a split), signals or AUROC input that
does not fit, probes that cannot run; each derives from :class:`amp.errors.AmpError`.
"""

from __future__ import annotations

from amp.errors import AmpError


class DetectionError(AmpError, ValueError):
    """A detection request that cannot be served: bad settings, too few sentences, mismatched input."""


class AurocError(DetectionError):
    """Scores and labels that cannot give an AUROC (different lengths, a label not 0/1, a NaN score)."""


class ProbeError(DetectionError):
    """A probe that cannot run: an engine without per-layer hidden states, a sentence not in its prompt."""
