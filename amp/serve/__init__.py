"""The parser service: the constrained parser hosted on Ray Serve (``python -m amp serve``).

* :mod:`amp.serve.schema` — the JSON request bodies, validated and bounded (OpenAPI at ``/openapi.json``);
* :mod:`amp.serve.worker` — ``ParserWorker``, the model replicas (one per GPU, or CPU replicas),
  which merge concurrent requests into shared forward passes (Serve request batching);
* :mod:`amp.serve.jobs` — ``JobManager``, sweeps as jobs that outlive their client;
* :mod:`amp.serve.api` — ``Api``, the HTTP ingress: token check, body limit, JSON errors;
* :mod:`amp.serve.launch` — starting or joining a Ray cluster and deploying the three.

Clients use :class:`amp.parser.backends.remote.RemoteBackend` (``Parser.remote(url)``).  Importing this
package does not import Ray.
"""
