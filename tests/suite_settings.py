"""Settings the whole suite shares: Hypothesis profiles (registered on import).

``ci`` — selected when ``CI`` is true: ``derandomize=True`` (the same examples on every run),
:data:`CI_MAX_EXAMPLES` examples, no example database.  ``dev`` — otherwise: random,
:data:`DEV_MAX_EXAMPLES` examples, an example database in the system temp folder (never in the
repository).  Both print the ``@reproduce_failure`` blob of a failing example
(``print_blob=True``) and have no deadline (the machines are shared and slow).
``HYPOTHESIS_PROFILE`` names a profile explicitly.  A test's own ``@settings(max_examples=...)``
keeps its count under both profiles.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Mapping
from pathlib import Path

from hypothesis import HealthCheck, settings
from hypothesis.database import DirectoryBasedExampleDatabase

#: Examples per property test under the ``ci`` profile (unless a test states its own).
CI_MAX_EXAMPLES = 100
#: Examples per property test under the ``dev`` profile (unless a test states its own).
DEV_MAX_EXAMPLES = 500
#: Where the ``dev`` profile keeps failing examples between runs (outside the repository).
DEV_DATABASE = Path(tempfile.gettempdir()) / "amp-explorer-hypothesis"

settings.register_profile(
    "ci", derandomize=True, max_examples=CI_MAX_EXAMPLES, database=None, print_blob=True, deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile(
    "dev", max_examples=DEV_MAX_EXAMPLES, print_blob=True, deadline=None,
    database=DirectoryBasedExampleDatabase(DEV_DATABASE),
)


def hypothesis_profile(environ: Mapping[str, str] = os.environ) -> str:
    """``$HYPOTHESIS_PROFILE`` if set, else ``ci`` when ``$CI`` is true, else ``dev``."""
    explicit = environ.get("HYPOTHESIS_PROFILE", "").strip()
    if explicit:
        return explicit
    return "ci" if environ.get("CI", "").strip().lower() in {"1", "true", "yes"} else "dev"
