"""The HTTP API door: `create_app(settings)` builds the FastAPI app (`kg.http.app`); its routes live in
`routes` (health, jobs), `turns`, `facts`, `relationships` and `erase`, each an `APIRouter`.

`uvicorn --factory kg.http:default_app` serves it with the settings of `kg.toml` and the environment.
"""

from kg.http.app import create_app, default_app

__all__ = ["create_app", "default_app"]
