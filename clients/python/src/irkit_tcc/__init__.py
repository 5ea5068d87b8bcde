"""Client, effect worker and test helper for irkit's TCC durable host.

- :class:`Client`: start executions and await their results.
- :class:`Worker`: run effect handlers on tasks pulled from the host.
- :mod:`irkit_tcc.testing`: run a workflow against scripted effects.
"""

from ._http import ApiError, TransportError
from .client import Client, Execution, ExecutionFailed
from .values import to_plain, to_tagged
from .worker import Task, Worker

__all__ = [
    "ApiError",
    "Client",
    "Execution",
    "ExecutionFailed",
    "Task",
    "TransportError",
    "Worker",
    "to_plain",
    "to_tagged",
]
