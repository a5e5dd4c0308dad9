"""Every error the bench scripts raise on purpose, in one place; each derives from
:class:`amp.errors.AmpError`, like the library's (``tests/foundation/test_error_tree.py``)."""

from __future__ import annotations

from amp.errors import AmpError


class CarryError(AmpError):
    """The carried folder of ``bench/gpu_carry.py`` could not be built (what and why in the message)."""


class StreamlitClientError(AmpError):
    """The light Streamlit client of ``bench/st_client.py`` could not do what it was asked (what and why)."""


class ClassLoadError(AmpError):
    """``bench/class_load.py`` could not start its app or its poll, or a phone could not vote (what and why)."""


class AgreementError(AmpError):
    """``bench/engine_bench.py --agreement``: a records file or a setting of the agreement rule is not usable (what and where)."""
