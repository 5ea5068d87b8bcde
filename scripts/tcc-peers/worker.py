"""irkit side of the peer benchmark: the effect worker (clients/python's `Worker`) answering the
three `bench.*` steps of small3.py. Usage: worker.py URL CONCURRENCY. Prints `ready`, stops on
SIGTERM."""

import sys

from irkit_tcc import Task, Worker

w = Worker(sys.argv[1], concurrency=int(sys.argv[2]), lease=30.0, poll_wait=10.0)


@w.effect("bench.*")
def step(task: Task):
    return 1


print("ready", flush=True)
w.run()
