#!/usr/bin/env python3
"""The settings researchers vary (--policy-opt) and the scenes that show
SnapKV's scoring.

On scenes/story_snapkv.json and models/stories260K/story_snapkv_model.json
(prompt 256, budget 96, both above the 64-query window) SnapKV, PyramidKV
and AdaKV keep, at the prompt's end, other positions than a sliding
window does; on scenes/story.json (budget 32, within the window) SnapKV
keeps exactly the window's. Each setting changes SnapKV's (or AdaKV's)
kept sets on the shipped scene. Every output prints the settings that
differ from the defaults beside its table (text, JSON, CSV, the trace),
and nothing when none does. Usage: policy_settings_test.py H2O_TUI
"""
import json
import subprocess
import sys

failures = 0


def fail(what):
    global failures
    print(f"FAIL: {what}")
    failures += 1


def run(binary, args):
    out = subprocess.run([binary, "--quiet", *args], capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit(f"{' '.join(args)}: exit {out.returncode}: {out.stderr.strip()}")
    return out.stdout


def kept_at(binary, scene, step, policies, opts=()):
    """Each policy's kept sets after STEP: {policy: [[kept of kv head g]
    of layer l]}. The trace of that step only (--trace-steps)."""
    lines = run(binary, ["--trace", "--trace-steps", str(step), "--policies",
                         ",".join(policies), *opts, scene]).splitlines()
    if len(lines) != 1 or not lines[0].startswith(f'{{"step": {step},'):
        raise SystemExit(f"{scene}: not the one line of step {step}")
    obj = json.loads(lines[0])
    return {p: [[r["kept"] for r in layer] for layer in obj[p]] for p in policies}


def differ(a, b):
    """How many (layer, kv head) kept sets of A and B differ."""
    return sum(x != y for la, lb in zip(a, b) for x, y in zip(la, lb))


def check_scoring(binary, scene, prompt):
    kept = kept_at(binary, scene, prompt,
                   ["window", "snapkv", "snapkv-win", "pyramidkv", "adakv"])
    for p in ("snapkv", "pyramidkv", "adakv"):
        n = differ(kept[p], kept["window"])
        print(f"{scene}: {p} keeps other positions than window in {n} caches at step {prompt}")
        if n == 0:
            fail(f"{scene}: {p} keeps what a window keeps")
    return kept


def main(binary):
    kept = check_scoring(binary, "scenes/story_snapkv.json", 256)
    check_scoring(binary, "models/stories260K/story_snapkv_model.json", 256)
    # Within the window SnapKV is a window: the scenes before this one.
    plain = kept_at(binary, "scenes/story.json", 64, ["window", "snapkv"])
    if differ(plain["snapkv"], plain["window"]):
        fail("scenes/story.json: snapkv no longer a window within the 64-query window")

    # Each setting changes kept sets on the shipped scene: one run, each
    # setting on a policy of its own (snapkv-win chooses as snapkv does at
    # the prompt's end).
    settings = (("snapkv.window=8", "snapkv"), ("snapkv-win.kernel=1", "snapkv-win"),
                ("pyramidkv.pool=max", "pyramidkv"), ("adakv.alloc=authors", "adakv"))
    args = [a for opt, _ in settings for a in ("--policy-opt", opt)]
    other = kept_at(binary, "scenes/story_snapkv.json", 256, [p for _, p in settings], args)
    for opt, p in settings:
        n = differ(other[p], kept[p])
        print(f"--policy-opt {opt}: {n} of {p}'s caches keep other positions")
        if n == 0:
            fail(f"--policy-opt {opt} changes no kept set")

    # The settings beside every table, only when they differ.
    opts = ["--policy-opt", "snapkv.window=8", "--policy-opt", "adakv.alloc=authors",
            "--policy-opt", "snapkv-win.window=64"]
    want_line = "snapkv.window=8 adakv.alloc=authors"
    want_obj = {"snapkv.window": 8, "adakv.alloc": "authors"}
    scene = "scenes/cat_sat.json"
    for mode in (["--report"], ["--budget-sweep=2,4"]):
        text = run(binary, [*mode, *opts, scene])
        if f"settings: {want_line} (" not in text:
            fail(f"{mode[0]} text: no settings line")
        obj = json.loads(run(binary, [*mode, "--json", *opts, scene]))
        if obj.get("settings") != want_obj:
            fail(f"{mode[0]} JSON: settings {obj.get('settings')}")
        csv = run(binary, [*mode, "--csv", *opts, scene])
        if csv.splitlines()[0] != f"# settings: {want_line}":
            fail(f"{mode[0]} CSV: first line {csv.splitlines()[0]!r}")
        for fmt in ([], ["--json"], ["--csv"]):
            if "settings" in run(binary, [*mode, *fmt, scene]):
                fail(f"{mode[0]} {fmt}: settings printed without any")
    for line in run(binary, ["--trace", *opts, scene]).splitlines():
        if json.loads(line).get("settings") != want_obj:
            fail("trace: a step without its settings")
            break
    if "settings" in run(binary, ["--trace", scene]):
        fail("trace: settings printed without any")
    print(f"{failures} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
