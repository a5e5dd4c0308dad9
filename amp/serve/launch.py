"""Starting the parser service: a Ray cluster (started here, or joined), then the three deployments.

:func:`config_from_args` validates the command line once (:class:`ServeConfig`), including the
rule that a service listening beyond loopback needs a token; :func:`start` deploys; :func:`stop`
shuts Serve and this process's Ray connection down.
"""

from __future__ import annotations

import ipaddress
import os
from typing import Any, cast

import amp
from amp.parser.engines import check_combination, select_engine
from amp.parser.search.settings import DEFAULT_TOP_N
from amp.serve.errors import ServeError
from amp.serve.work import ServeConfig, check_deadline
from amp.settings import REPO_ROOT, cache_root

#: Environment variables the replicas inherit from the process that starts the service.
PASSED_ENV = ("AMP_CACHE_DIR", "AMP_MODELS_DIR", "HF_HOME", "HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")
#: Serve application name and HTTP route prefix.
APP_NAME = "amp"


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def config_from_args(*, spec: str, device: str | None, dtype: str | None, replicas: int | None, host: str,
                     port: int, address: str | None, token: str | None, trust_remote_code: bool = False,
                     use_cache: bool = True, batch_size: int = 8, top_n: int = DEFAULT_TOP_N,
                     job_retention_s: float = ServeConfig.job_retention_s, engine: str | None = None,
                     deadline_s: float = ServeConfig.deadline_s) -> ServeConfig:
    """A checked :class:`ServeConfig` (raises :class:`ServeError` with the reason)."""
    if not is_loopback(host) and not token:
        raise ServeError(f"listening on {host} reaches beyond this machine: set AMP_TOKEN to a secret first "
                         "(clients send it as a bearer token)")
    if token is not None and len(token) < 16:
        raise ServeError("AMP_TOKEN must be at least 16 characters")
    if not 0 < port < 65536:
        raise ServeError(f"--port must be 1-65535, not {port}")
    if replicas is not None and not 1 <= replicas <= 64:
        raise ServeError(f"--replicas must be 1-64, not {replicas}")
    if not 1 <= batch_size <= 64:
        raise ServeError(f"--batch-size must be 1-64, not {batch_size}")
    if not job_retention_s > 0:
        raise ServeError(f"--job-retention-hours must be above 0, not {job_retention_s / 3600:g}")
    try:
        deadline_s = check_deadline(deadline_s)
    except (TypeError, ValueError) as exc:
        raise ServeError(f"--deadline: {exc}") from None
    cpus = os.cpu_count() or 1
    gpu = (device or "").startswith("cuda")
    n = replicas or 1
    if gpu:
        import torch  # late: start-up cost (torch)

        if not torch.cuda.is_available():
            raise ServeError("--device cuda asked, but this machine has no CUDA device (or torch is a CPU build)")
        n = replicas or torch.cuda.device_count()
    # the engine is named, checked and chosen here, once: the replicas read it from the config, not their env
    chosen = select_engine(engine, spec=spec, device="cuda" if gpu else device, dtype=dtype)
    check_combination(chosen, device="cuda" if gpu else device, dtype=dtype)  # refused before Ray starts
    return ServeConfig(spec=spec, device="cuda" if gpu else device, dtype=dtype, engine=chosen,
                       trust_remote_code=trust_remote_code,
                       replicas=n, cpus_per_replica=1.0, gpus_per_replica=1.0 if gpu else 0.0, host=host, port=port,
                       address=address, use_cache=use_cache, batch_size=batch_size, top_n=top_n,
                       threads=max(1, cpus // n), job_retention_s=float(job_retention_s), deadline_s=deadline_s)


def _runtime_env(config: ServeConfig) -> dict[str, Any]:

    env = {name: os.environ[name] for name in PASSED_ENV if os.environ.get(name)}
    env["AMP_CACHE_DIR"] = config.cache_dir or env.get("AMP_CACHE_DIR") or str(cache_root())
    if config.address:  # another machine's workers get the package itself

        return {"env_vars": env, "py_modules": [os.path.dirname(amp.__file__)]}
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO_ROOT), os.environ.get("PYTHONPATH", "")) if p)
    return {"env_vars": env}


#: Ray's switch that makes a local cluster use the loopback address as the node's address (read by
#: ``ray._private.services.get_node_ip_address``; false, Ray replaces ``127.0.0.1`` by the
#: machine's outward address and its GCS, raylet and worker servers listen on every interface).
RAY_LOCAL_ONLY_VAR = "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"


def _loopback_only() -> None:
    """Make the Ray cluster started next keep every internal server (GCS, raylet, workers, agents)
    on loopback: the service was asked to listen on loopback only (issue #27 item 9)."""
    os.environ[RAY_LOCAL_ONLY_VAR] = "0"  # the raylet and its workers inherit it
    from ray._private import ray_constants  # late: optional dependency (ray, the serve extra)

    ray_constants.ENABLE_RAY_CLUSTER = False  # read at call time; ray may be imported already


def start(config: ServeConfig, token: str | None) -> str:
    """Start (or join) Ray, deploy the service, wait until it answers; its base URL.

    A cluster started here for a loopback ``host`` keeps Ray's own servers on loopback too
    (:func:`_loopback_only`); beyond loopback they listen where Ray puts them (every interface),
    guarded by Ray's cluster token and the service's bearer token.
    """
    import ray  # late: optional dependency (ray, the serve extra)
    from ray import serve  # late: optional dependency (ray, the serve extra)

    from amp.serve.api import Api  # late: optional dependency (fastapi, the serve extra; ray, the serve extra)
    from amp.serve.jobs import JobManager  # late: optional dependency (ray, the serve extra)
    from amp.serve.worker import ParserWorker  # late: optional dependency (ray, the serve extra)

    runtime_env = _runtime_env(config)
    if not ray.is_initialized():
        if not config.address and is_loopback(config.host):
            _loopback_only()
        if config.address:
            ray.init(address=config.address, runtime_env=runtime_env, log_to_driver=False)
        else:
            need = config.replicas * config.cpus_per_replica
            ray.init(num_cpus=max(int(need + 0.999), os.cpu_count() or 1),
                     num_gpus=int(config.replicas * config.gpus_per_replica) or None,
                     include_dashboard=False, _node_ip_address="127.0.0.1", runtime_env=runtime_env,
                     log_to_driver=False)
    serve.start(http_options={"host": config.host, "port": config.port})
    actor = {"num_cpus": config.cpus_per_replica, "num_gpus": config.gpus_per_replica, "runtime_env": runtime_env}
    worker = cast(Any, ParserWorker).options(num_replicas=config.replicas, ray_actor_options=actor).bind(config.to_dict())
    jobs = cast(Any, JobManager).options(ray_actor_options={"num_cpus": 0, "runtime_env": runtime_env}).bind(
        worker, config.to_dict())
    from amp.serve.api import TOKEN_VAR  # late: optional dependency (fastapi, the serve extra; ray, the serve extra)

    ingress_env = {**runtime_env, "env_vars": {**runtime_env["env_vars"], TOKEN_VAR: token or ""}}
    api = cast(Any, Api).options(ray_actor_options={"num_cpus": 0, "runtime_env": ingress_env}).bind(worker, jobs)
    serve.run(api, name=APP_NAME, route_prefix="/", blocking=False)
    host = "127.0.0.1" if config.host in ("0.0.0.0", "::") else config.host
    return f"http://{host}:{config.port}"


def stop() -> None:
    """Shut the service down and leave Ray (a cluster started here stops with it)."""
    import ray  # late: optional dependency (ray, the serve extra)
    from ray import serve  # late: optional dependency (ray, the serve extra)

    try:
        serve.shutdown()
    finally:
        ray.shutdown()
