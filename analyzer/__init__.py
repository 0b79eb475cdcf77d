"""analyzer: read how LLM applications create and verify prompt/KV-cache reuse."""

__version__ = "0.1.0"

from analyzer.native.loader import install as _install_native  # noqa: E402  (after the version: it is light)

_install_native()  # compiled index/graph modules when built for these sources (`analyze native build`)
