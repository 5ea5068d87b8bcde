"""Plain JSON <-> TCC tagged values (the host's wire form of program values)."""

from __future__ import annotations

import math
from typing import Any, Dict


def to_tagged(value: Any) -> Dict[str, Any]:
    """A plain JSON value (None, bool, int, float, str, list, dict) as a tagged value."""
    if value is None:
        return {"t": "null"}
    if isinstance(value, bool):
        return {"t": "bool", "v": value}
    if isinstance(value, (int, float)):
        if isinstance(value, float) and not math.isfinite(value):
            raise ValueError("non-finite numbers have no plain JSON form")
        return {"t": "number", "v": value}
    if isinstance(value, str):
        return {"t": "string", "v": value}
    if isinstance(value, (list, tuple)):
        return {"t": "array", "v": [to_tagged(v) for v in value]}
    if isinstance(value, dict):
        return {"t": "object", "v": {str(k): to_tagged(v) for k, v in value.items()}}
    raise TypeError(f"not a plain JSON value: {type(value).__name__}")


def to_plain(tagged: Any) -> Any:
    """A tagged value as plain JSON (`undefined` becomes None)."""
    if not isinstance(tagged, dict):
        return None
    t, v = tagged.get("t"), tagged.get("v")
    if t in ("bool", "number", "string"):
        return v
    if t == "array" and isinstance(v, list):
        return [to_plain(x) for x in v]
    if t == "object" and isinstance(v, dict):
        return {k: to_plain(x) for k, x in v.items()}
    return None
