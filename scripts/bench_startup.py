#!/usr/bin/env python3
"""Start-up and small-input figures of irkit against naga-cli (issue 41).

Run through scripts/bench-startup.sh, which builds irkit and installs naga-cli.
Usage: bench_startup.py IRKIT NAGA [ROUNDS]
       bench_startup.py --glslang IRKIT BEFORE [ROUNDS]   (VPL -> GLSL against glslangValidator)

Every measured command runs once per round, the rounds alternating irkit's
command with naga's for the same input, so load from other processes falls on
both alike. Printed: median wall-clock times, the irkit / naga ratio of the
medians, and the goals of docs/startup.md. Maximum RSS comes from
/usr/bin/time (a small parent, so the figure is the command's own).
"""

import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# The spec's complete examples (vpl-v1.md section 10.3).
EXAMPLES = ["minimal.vpl", "loop_call.vpl", "nested_storage.vpl"]
# irkit target -> naga's outputs for irkit's WGSL of the same module: a file name, or for GLSL
# (profile, stage, file name), one naga run per stage with that stage's entry point.
TARGETS = {
    "spirv": ["out.spv"],
    "wgsl": ["out.wgsl"],
    "msl": ["out.metal"],
    "hlsl": ["out.hlsl"],
    "glsl-es-300": [("es300", "vertex", "out.vert"), ("es300", "fragment", "out.frag")],
    "glsl-420": [("core420", "vertex", "out.vert"), ("core420", "fragment", "out.frag")],
}
DEVNULL = [(os.POSIX_SPAWN_OPEN, 1, "/dev/null", os.O_WRONLY, 0),
           (os.POSIX_SPAWN_OPEN, 2, "/dev/null", os.O_WRONLY, 0)]


def spawn_seconds(argv):
    """(wall-clock, CPU) seconds of one run of argv (which must succeed), or
    the sums over a list of argvs run one after the other. CPU is the user
    plus system time of the process: on a loaded machine the wall clock
    mostly measures waiting for a core."""
    if isinstance(argv[0], list):
        runs = [spawn_seconds(a) for a in argv]
        return (sum(w for w, _ in runs), sum(c for _, c in runs))
    start = time.perf_counter()
    pid = os.posix_spawn(argv[0], argv, os.environ, file_actions=DEVNULL)
    _, status, usage = os.wait4(pid, 0)
    elapsed = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"failed: {' '.join(argv)}")
    return (elapsed, usage.ru_utime + usage.ru_stime)


def user_instructions(argv):
    """Instructions the process executes in user space (dynamic loader included), counted by
    valgrind's callgrind: the same on a loaded machine as on a quiet one. None without
    valgrind."""
    if shutil.which("valgrind") is None:
        return None
    out = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", *argv],
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    found = re.search(r"Collected : (\d+)", out.stderr)
    return int(found.group(1)) if found else None


def minor_faults(argv, runs=5):
    """The median count of minor page faults of argv: what the kernel does for a start beyond
    execve (mapping pages in, copying the ones the loader writes)."""
    counts = []
    for _ in range(runs):
        pid = os.posix_spawn(argv[0], argv, os.environ, file_actions=DEVNULL)
        _, _, usage = os.wait4(pid, 0)
        counts.append(usage.ru_minflt)
    return statistics.median(counts)


def max_rss_kib(argv):
    out = subprocess.run(["/usr/bin/time", "-f", "%M", *argv],
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    return int(out.stderr.strip().splitlines()[-1])


def large_module(min_bytes):
    """The generated module of crates/vpl/benches/generate.rs (same text)."""
    s = ["(module 1\n  (types\n    (type t0 void)\n    (type t1 float)\n    (type t2 int)\n"
         "    (type t3 bool)\n    (type t4 vector float 4))\n  (uniforms)\n",
         "  (vertex f0\n    (interface\n      (out s0 \"p\" t4 -1 position))\n    (functions\n"
         "      (function f0 \"v\" t0\n        (parameters)\n        (registers\n"
         "          (register r0 t4))\n        (block b0\n          (construct r0 (float 1.0))\n"
         "          (store (stage s0) r0)\n          (return)))))\n",
         "  (fragment f0\n    (interface\n      (out s0 \"c\" t4 0 fragment_color))\n"
         "    (functions\n      (function f0 \"main\" t0\n        (parameters)\n"
         "        (registers\n          (register r0 t4)\n          (register r1 t1))\n"
         "        (block b0\n          (call r1 f1 (float 0.5))\n          (construct r0 r1)\n"
         "          (store (stage s0) r0)\n          (return)))"]
    size = sum(len(p) for p in s)
    k = 1
    while size < min_bytes:
        part = [f"\n      (function f{k} \"helper_{k}\" t1\n        (parameters\n"
                f"          (parameter p0 t1))\n        (registers\n          (register r0 t1)\n"
                f"          (register r1 t2)\n          (register r2 t3)\n"
                f"          (register r3 t4))\n        (block b0\n"
                f"          (load r0 (parameter p0))\n          (copy r1 (int 0))\n"
                f"          (branch b1))\n        (block b1"]
        for j in range(40):
            c = (j + k) * 0.125
            op = ["add", "multiply", "subtract", "divide"][j % 4]
            part.append(f"\n          ({op} r0 r0 (float {c!r}))")
        part.append("\n          (construct r3 r0 r0 r0 (float 1.0))\n"
                    "          (swizzle r0 r3 \"y\")\n          (add r1 r1 (int 1))\n"
                    "          (less r2 r1 (int 8))\n          (branch_if r2 b1 b2))\n"
                    "        (block b2\n          (return r0)))")
        text = "".join(part)
        s.append(text)
        size += len(text)
        k += 1
    s.append(")))\n")
    return "".join(s)


def entry_points(wgsl):
    """The entry point of each stage in a WGSL file: {"vertex": name, ...}."""
    with open(wgsl) as f:
        text = f.read()
    return {m.group(1): m.group(2)
            for m in re.finditer(r"@(vertex|fragment)\s*\n\s*fn\s+(\w+)", text)}


def naga_argv(naga, wgsl, outs, out_dir):
    """naga's command(s) for one target: GLSL needs one run per stage."""
    if not isinstance(outs[0], tuple):
        return [naga, wgsl] + [os.path.join(out_dir, o) for o in outs]
    entries = entry_points(wgsl)
    return [[naga, "--profile", profile, "--entry-point", entries[stage], wgsl,
             os.path.join(out_dir, name)]
            for profile, stage, name in outs]


def glslang_main(irkit, before, rounds):
    """VPL -> GLSL on the generated 12.6 MB module against glslangValidator on the output (issue
    41's ratio, goal >= 10x): each round runs `irkit vpl compile --target glsl-420` with this
    build and with BEFORE (an earlier build), then glslangValidator on the .vert and the .frag.
    Medians of CPU time (user + system) and of minor page faults."""
    glslang = shutil.which("glslangValidator")
    if glslang is None:
        raise SystemExit("glslangValidator not found (Debian package glslang-tools)")
    work = tempfile.mkdtemp(prefix="irkit-bench-glslang-")
    try:
        path = os.path.join(work, "gen.vpl")
        with open(path, "w") as f:
            f.write(large_module(12 << 20))
        outs = {name: os.path.join(work, name) for name in ("after", "before")}
        for out in outs.values():
            os.makedirs(out)
        argv = {"after": [irkit, "vpl", "compile", path, "--target", "glsl-420", "-o", outs["after"]],
                "before": [before, "vpl", "compile", path, "--target", "glsl-420", "-o",
                           outs["before"]]}
        for a in argv.values():
            subprocess.run(a, check=True, stdout=subprocess.DEVNULL)
        for ext in ("vert", "frag", "reflect.json"):
            with open(os.path.join(outs["after"], "gen." + ext), "rb") as a, \
                    open(os.path.join(outs["before"], "gen." + ext), "rb") as b:
                if a.read() != b.read():
                    raise SystemExit(f"gen.{ext} differs between the two builds")
        argv["glslang"] = [[glslang, os.path.join(outs["after"], "gen." + ext)]
                           for ext in ("vert", "frag")]
        cpu = {name: [] for name in argv}
        faults = {name: [] for name in ("after", "before")}
        for _ in range(rounds):
            for name in ("before", "after", "glslang"):
                cpu[name].append(spawn_seconds(argv[name])[1])
        for name in faults:
            faults[name].append(minor_faults(argv[name], runs=3))
        load = os.getloadavg()
        size = os.path.getsize(path)
        frag = os.path.getsize(os.path.join(outs["after"], "gen.frag"))
        print(f"VPL -> GLSL 4.20, generated module {size} bytes (fragment shader {frag} bytes);"
              f" {rounds} alternated rounds; load average {load[0]:.1f} {load[1]:.1f}"
              f" {load[2]:.1f} on {os.cpu_count()} CPUs; medians of CPU time (user + system)")
        g = statistics.median(cpu["glslang"])
        for name in ("before", "after"):
            c = statistics.median(cpu[name])
            print(f"irkit {name:<6} {c:.3f} s  glslang {g:.3f} s  glslang / irkit {g / c:.2f}x"
                  f"  (rounds {min(cpu[name]):.3f}-{max(cpu[name]):.3f} s)"
                  f"  minor page faults {faults[name][0]:.0f}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--glslang":
        if len(sys.argv) < 4:
            raise SystemExit(__doc__)
        glslang_main(os.path.abspath(sys.argv[2]), os.path.abspath(sys.argv[3]),
                     int(sys.argv[4]) if len(sys.argv) > 4 else 5)
        return
    if len(sys.argv) < 3:
        raise SystemExit(__doc__)
    irkit, naga = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 21
    large = [int(b) for b in os.environ.get("BENCH_LARGE_BYTES", "100000,1000000").split(",") if b]
    work = tempfile.mkdtemp(prefix="irkit-bench-startup-")
    try:
        inputs = []
        for name in EXAMPLES:
            inputs.append((name, os.path.join(ROOT, "examples", "vpl", name)))
        for size in large:
            path = os.path.join(work, f"gen{size}.vpl")
            with open(path, "w") as f:
                f.write(large_module(size))
            inputs.append((f"generated {size // 1000} KB", path))
        cases = [("--version", [irkit, "--version"], [naga, "--version"])]
        for label, path in inputs:
            stem = os.path.splitext(os.path.basename(path))[0]
            subprocess.run([irkit, "vpl", "compile", path, "--target", "wgsl", "-o", work],
                           check=True, stdout=subprocess.DEVNULL)
            wgsl = os.path.join(work, stem + ".wgsl")
            out = os.path.join(work, "out-" + stem)
            os.makedirs(out, exist_ok=True)
            cases.append((f"{label}: check", [irkit, "vpl", "check", path], [naga, wgsl]))
            for target, outs in TARGETS.items():
                cases.append((f"{label}: {target}",
                              [irkit, "vpl", "compile", path, "--target", target, "-o", out],
                              naga_argv(naga, wgsl, outs, out)))
        # Verbs without a naga counterpart, each against `irkit --version` (its fixed cost), and
        # the LLVM hand-over: irkit starting irkit-llvm against irkit-llvm started directly.
        helper = os.path.join(os.path.dirname(irkit), "irkit-llvm")
        loop = os.path.join(ROOT, "examples", "zlm", "run", "loop.zlt")
        saga = os.path.join(ROOT, "examples", "tcc", "src", "order_saga.py")
        jit = ["zlm", "run", loop, "--entry", "Main.sum", "--args", "10", "--engine", "jit"]
        others = [
            ("zlm run (interpreter) vs --version",
             [irkit, "zlm", "run", loop, "--entry", "Main.sum", "--args", "10"], [irkit, "--version"]),
            ("tcc compile order_saga.py vs --version",
             [irkit, "tcc", "compile", saga, "-o", os.path.join(work, "saga.json")],
             [irkit, "--version"]),
            ("zlm run --engine jit vs irkit-llvm", [irkit, *jit], [helper, *jit]),
        ]
        # BENCH_IRKIT_BEFORE=PATH: an earlier irkit build, alternated with this one.
        before = os.environ.get("BENCH_IRKIT_BEFORE")
        if before:
            minimal = os.path.join(ROOT, "examples", "vpl", "minimal.vpl")
            others += [
                ("--version vs BENCH_IRKIT_BEFORE", [irkit, "--version"], [before, "--version"]),
                ("vpl check minimal.vpl vs before",
                 [irkit, "vpl", "check", minimal], [before, "vpl", "check", minimal]),
                ("vpl compile spirv minimal.vpl vs before",
                 [irkit, "vpl", "compile", minimal, "--target", "spirv", "-o", work],
                 [before, "vpl", "compile", minimal, "--target", "spirv", "-o", work]),
            ]
        times = {label: ([], []) for label, _, _ in cases + others}
        for _ in range(rounds):
            for label, mine, theirs in cases + others:
                times[label][0].append(spawn_seconds(mine))
                times[label][1].append(spawn_seconds(theirs))
        load = os.getloadavg()
        print(f"{rounds} alternated rounds; load average {load[0]:.1f} {load[1]:.1f} {load[2]:.1f}"
              f" on {os.cpu_count()} CPUs; medians in ms, wall clock and CPU (user + system)")

        def medians(label, side):
            runs = times[label][side]
            return (statistics.median(w for w, _ in runs) * 1e3,
                    statistics.median(c for _, c in runs) * 1e3)

        print(f"{'case':<30} {'irkit wall':>10} {'naga wall':>10} {'ratio':>6}"
              f" {'irkit CPU':>10} {'naga CPU':>9} {'ratio':>6}")
        worst = [0.0, 0.0]
        for label, _, _ in cases:
            (aw, ac), (bw, bc) = medians(label, 0), medians(label, 1)
            if not label.startswith("generated") and label != "--version":
                worst = [max(worst[0], aw / bw), max(worst[1], ac / bc)]
            print(f"{label:<30} {aw:10.2f} {bw:10.2f} {aw / bw:6.2f}"
                  f" {ac:10.2f} {bc:9.2f} {ac / bc:6.2f}")
        print(f"{'case':<42} {'wall':>8} {'base':>8} {'CPU':>8} {'base':>8}")
        for label, _, _ in others:
            (aw, ac), (bw, bc) = medians(label, 0), medians(label, 1)
            print(f"{label:<42} {aw:8.2f} {bw:8.2f} {ac:8.2f} {bc:8.2f}")
        mine_rss = max_rss_kib([irkit, "--version"])
        naga_rss = max_rss_kib([naga, "--version"])
        version_wall, version_cpu = medians("--version", 0)
        fastest = min(w for w, _ in times["--version"][0]) * 1e3
        print(f"max RSS of --version: irkit {mine_rss / 1024:.1f} MiB, naga {naga_rss / 1024:.1f} MiB")
        print(f"minor page faults of --version: irkit {minor_faults([irkit, '--version']):.0f},"
              f" naga {minor_faults([naga, '--version']):.0f}")
        counted = [(label, user_instructions(argv)) for label, argv in
                   [("irkit --version", [irkit, "--version"]), ("naga --version", [naga, "--version"]),
                    ("irkit vpl check minimal.vpl",
                     [irkit, "vpl", "check", os.path.join(ROOT, "examples", "vpl", "minimal.vpl")])]
                   + ([("before --version", [before, "--version"])] if before else [])]
        for label, count in counted:
            if count is not None:
                print(f"user-space instructions (callgrind), {label}: {count / 1e6:.3f} M")

        def verdict(ok):
            return "met" if ok else "NOT met"

        print(f"goal irkit --version <= 3 ms: median wall {version_wall:.2f} ms, CPU"
              f" {version_cpu:.2f} ms, fastest run {fastest:.2f} ms: {verdict(version_cpu <= 3)} (CPU)")
        print(f"goal irkit --version <= 10 MiB: {mine_rss / 1024:.1f} MiB {verdict(mine_rss <= 10240)}")
        print(f"goal small inputs <= 1.5x naga: worst wall {worst[0]:.2f}x, worst CPU {worst[1]:.2f}x:"
              f" {verdict(worst[1] <= 1.5)} (CPU)")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
