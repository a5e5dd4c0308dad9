"""A real parser service on a local Ray cluster (loopback only), with the tiny saved GPT-2.

``service`` starts it once per module (two CPU replicas, its own cache folder, a deadline of
:data:`SERVICE_DEADLINE_S`) and stops Ray
afterwards; ``service_helpers.free_port`` finds a loopback port.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from service_helpers import SERVICE_DEADLINE_S, free_port


@dataclasses.dataclass
class Service:
    url: str
    model: Path
    cache_dir: Path
    config: Any


@pytest.fixture(scope="module")
def service(saved_tiny_model: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    pytest.importorskip("ray")
    from amp.serve import launch

    cache_dir = tmp_path_factory.mktemp("served-cache")
    config = launch.config_from_args(spec=str(saved_tiny_model), device="cpu", dtype="float32", replicas=2,
                                     host="127.0.0.1", port=free_port(), address=None, token=None, batch_size=2,
                                     deadline_s=SERVICE_DEADLINE_S)
    config = dataclasses.replace(config, cache_dir=str(cache_dir))
    url = launch.start(config, None)
    try:
        yield Service(url=url, model=saved_tiny_model, cache_dir=cache_dir, config=config)
    finally:
        launch.stop()
