"""The HTTP API door: `create_app(settings)` builds the FastAPI app (`kg.http.app`); its routes live
in one module per subject (`operations`: health, readiness, metrics; `sessions`, `search`, `facts`,
`corrections`, `relationships`, `erase`, `review`, `export`, `history`, `jobs`), each with its own
router and `register(app)`.

`uvicorn --factory kg.http:default_app` serves it with the settings of `kg.toml` and the environment.
"""

from kg.http.app import create_app, default_app

__all__ = ["create_app", "default_app"]
