#!/usr/bin/env python3
"""Drives the reference TCC engine (PyPI `tcc-engine`, its native EngineBinding)
with the policy of irkit's LocalHost, for the interop tests (tests/interop.rs).

Reads a JSON array of jobs on stdin and writes a JSON array of reports on
stdout, one per job. A job:
  artifact       artifact JSON text
  execution_id   execution id
  args           entry arguments (tagged values) or null
  continuation   continuation JSON text to resume from, or null for a fresh start
  effects        effect key -> tagged value, or {"error": message}
  events         event name -> tagged payload
  children       program name -> artifact JSON text (run to completion on create_child)
  child_results  child execution id -> tagged result (children registered before a resume)
  journal        effects run before a resume ({key, idempotency_key, input}): the host's
                 journal, answered again from `effects` without running them
  max_steps      instruction budget per run_until_host call
A report: transcript (every outcome envelope and every response, in order),
effect_log ({key, idempotency_key, input} of each effect the provider ran),
outcome (the final envelope), checkpoints ({continuation, effects}: the
continuation text at each persist_checkpoint as the reference's hosts obtain it
(continuation_json, with the request's revision set, as they do), and how many
effects the provider had run by then), error (a string, or null).

Numbers: `-0` is read as a float so that its sign survives.

The policy, as LocalHost's: effects answered from the map (an idempotency key
seen before is answered from the journal), persist_effect acknowledged,
registrations acknowledged and their wakes queued in registration order
(events from the map, timers fire at once, children run to completion first),
one wake per suspension (wakes for branches no longer registered dropped),
checkpoints confirmed. A resumed run first queues the wakes its continuation
waits for (registered branches by index, or the pending wait).
"""
import json
import sys

from tcc_engine._engine import EngineBinding

MAX_CHILD_DEPTH = 8


class HostFailure(Exception):
    pass


def loads(text):
    return json.loads(text, parse_int=lambda s: float(s) if s.startswith("-0") else int(s))


def message(obj):
    out = {"host_protocol_version": 1}
    out.update(obj)
    return out


def wake_for(op, branch_id, job):
    kind = op.get("type")
    if kind == "event":
        name = op["event_name"]
        if name not in job["events"]:
            raise HostFailure(f"no payload configured for event {name!r}")
        m = {"type": "event_payload", "value": job["events"][name]}
    elif kind == "timer":
        m = {"type": "timer_fired"}
    elif kind == "child":
        child = op["child_execution_id"]
        if child not in job.get("child_results", {}):
            raise HostFailure(f"no result for child {child!r}")
        m = {"type": "child_result", "value": job["child_results"][child], "child_execution_id": child}
    else:
        raise HostFailure(f"cannot wake a {kind!r}")
    if branch_id is not None:
        m["branch"] = branch_id
    return message(m)


def seed_wakes(continuation, job):
    """The wakes a resumed continuation waits for: its group's registered
    branches (by index), or its pending wait."""
    join = continuation.get("join")
    if join:
        branches = sorted(join.get("branches") or [], key=lambda b: b["index"])
        return [wake_for(b["op"], b["branch_id"], job) for b in branches if b["phase"] == "registered"]
    pending = continuation.get("pending") or {}
    if pending.get("type") == "wait":
        return [wake_for(pending["kind"], None, job)]
    return []


def registered(engine):
    join = loads(engine.continuation_json()).get("join") or {}
    return {b["branch_id"] for b in join.get("branches") or [] if b["phase"] == "registered"}


def run(job, depth=0):
    report = {"transcript": [], "effect_log": [], "outcome": None, "checkpoints": []}
    if job.get("continuation") is not None:
        engine = EngineBinding.resume(job["artifact"], job["continuation"])
        wakes = seed_wakes(loads(job["continuation"]), job)
    else:
        args = job.get("args")
        engine = (EngineBinding(job["artifact"], job["execution_id"]) if args is None
                  else EngineBinding(job["artifact"], job["execution_id"], json.dumps(args)))
        wakes = []
    journal = {}
    for done in job.get("journal") or []:
        canonical = json.dumps(done["input"], sort_keys=True, separators=(",", ":"))
        journal[done["idempotency_key"]] = (canonical, job["effects"][done["key"]])
    budget = job.get("max_steps") or 100000
    while True:
        outcome = loads(engine.run_until_host(budget))
        kind = outcome.get("type")
        if kind == "budget_exhausted":
            continue
        report["transcript"].append(outcome)
        if kind in ("completed", "failed", "cancelled"):
            report["outcome"] = outcome
            return report
        if kind == "suspended":
            # A wake for a branch no longer registered (a settled race, a
            # failed group) is dropped, as LocalHost drops it.
            response = None
            while wakes and response is None:
                w = wakes.pop(0)
                if "branch" not in w or w["branch"] in registered(engine):
                    response = w
            if response is None:
                raise HostFailure("suspended with nothing to deliver")
        elif kind == "host":
            request = outcome["request"]
            rtype = request["type"]
            if rtype == "persist_checkpoint":
                continuation = loads(engine.continuation_json())
                continuation["revision"] = request["revision"]
                report["checkpoints"].append({
                    "continuation": json.dumps(continuation, separators=(",", ":")),
                    "effects": len(report["effect_log"]),
                })
                response = message({"type": "persist_confirmed", "revision": request["revision"]})
            elif rtype == "run_effect":
                ikey = request["idempotency_key"]
                canonical = json.dumps(request["input"], sort_keys=True, separators=(",", ":"))
                if ikey in journal:
                    previous, answer = journal[ikey]
                    if previous != canonical:
                        raise HostFailure(f"effect {ikey} re-run with a different input")
                else:
                    key = request["key"]
                    if key not in job["effects"]:
                        raise HostFailure(f"no result configured for effect {key!r}")
                    answer = job["effects"][key]
                    report["effect_log"].append({"key": key, "idempotency_key": ikey, "input": request["input"]})
                    journal[ikey] = (canonical, answer)
                if isinstance(answer, dict) and isinstance(answer.get("error"), str):
                    response = message({"type": "effect_failed", "message": answer["error"]})
                else:
                    response = message({"type": "effect_result", "value": answer})
            elif rtype == "persist_effect":
                response = message({"type": "ack"})
            elif rtype in ("register_timer", "register_wait", "create_child"):
                in_join = loads(engine.continuation_json()).get("join") is not None
                if rtype == "register_timer":
                    wakes.append(wake_for({"type": "timer"}, request.get("branch"), job))
                elif rtype == "register_wait":
                    op = {"type": "event", "event_name": request["event_name"]}
                    wakes.append(wake_for(op, request["wait_id"] if in_join else None, job))
                else:
                    if depth >= MAX_CHILD_DEPTH:
                        raise HostFailure(f"child executions nested deeper than {MAX_CHILD_DEPTH}")
                    name = request["program_name"]
                    if name not in job["children"]:
                        raise HostFailure(f"no artifact configured for program {name!r}")
                    child_id = request["child_execution_id"]
                    sub = run(dict(job, artifact=job["children"][name], execution_id=child_id,
                                   args=request.get("args") or [], continuation=None, journal=[]),
                              depth + 1)
                    report["effect_log"].extend(sub["effect_log"])
                    if sub["outcome"].get("type") != "completed":
                        raise HostFailure(f"child {child_id} did not complete")
                    results = dict(job.get("child_results") or {})
                    results[child_id] = sub["outcome"].get("result")
                    job = dict(job, child_results=results)
                    op = {"type": "child", "child_execution_id": child_id}
                    wakes.append(wake_for(op, request["invoke_id"] if in_join else None, job))
                response = message({"type": "ack"})
            else:
                raise HostFailure(f"unexpected request {rtype!r}")
        else:
            raise HostFailure(f"unexpected outcome {kind!r}")
        report["transcript"].append(response)
        engine.apply_response(json.dumps(response))


def main():
    jobs = loads(sys.stdin.read())
    reports = []
    for job in jobs:
        try:
            report = run(job)
            report["error"] = None
        except Exception as e:  # engine errors and host failures alike, reported per job
            report = {"transcript": [], "effect_log": [], "outcome": None, "checkpoints": [],
                      "error": f"{type(e).__name__}: {e}"}
        reports.append(report)
    json.dump(reports, sys.stdout)


if __name__ == "__main__":
    main()
