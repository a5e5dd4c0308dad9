"""The project's version: one declaration, read by ``pyproject.toml`` (setuptools' dynamic
version), ``amp --version`` and the parser service's ``/v1/info``."""

__version__ = "0.3.0"
