#!/usr/bin/env python3
"""--policies runs fewer policies and changes none of their figures.

For each case, the report's and the sweep's JSON with a subset of the
policies must hold exactly the rows of the whole run for those policies
(every number equal, the model's too), and no other; the trace's steps
must hold exactly the whole trace's keys for those policies, h2o and full
(design §5's) always. Usage: policies_test.py H2O_TUI
"""
import json
import subprocess
import sys

ALL = ["full", "h2o", "window", "streaming", "tova", "knorm", "snapkv",
       "snapkv-win", "pyramidkv", "pyramidkv-win", "adakv", "adakv-win", "observed",
       "observed-win", "random", "keydiff",
       "expected"]

# The policies that read keys, and the scenes of the cases below that
# have none (attention scenes): there, by default, those policies are not
# run.
KEY_READERS = {"knorm", "keydiff", "expected"}
KEYLESS = {"scenes/cat_sat.json", "tests/scenes/two_heads.json"}


def every(scene):
    """The policies a run of SCENE without --policies has rows for."""
    return [p for p in ALL if scene not in KEYLESS or p not in KEY_READERS]


failures = 0


WHOLE = {}


def run(binary, args):
    """h2o-tui's stdout; a run of every policy once (the model's is the
    costly one)."""
    if "--policies" not in args and tuple(args) in WHOLE:
        return WHOLE[tuple(args)]
    out = subprocess.run([binary, "--quiet", *args], capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit(f"{' '.join(args)}: exit {out.returncode}: {out.stderr.strip()}")
    if "--policies" not in args:
        WHOLE[tuple(args)] = out.stdout
    return out.stdout


def fail(what):
    global failures
    print(f"FAIL: {what}")
    failures += 1


def rows(policies, chosen, what):
    """The rows of CHOSEN in a list of {"name": ...} objects, checking that
    it holds no others, in the table's order."""
    names = [p["name"] for p in policies]
    if names != [p for p in ALL if p in chosen]:
        fail(f"{what}: rows {names}, expected those of {sorted(chosen)}")
    return {p["name"]: p for p in policies}


def model_rows(model, chosen, what):
    """The model's rows: the policies chosen, and the full cache, its
    reference, always."""
    if model is None:
        return None
    return rows(model["policies"], set(chosen) | {"full"}, what + " model")


def compare_report(binary, scene, chosen, extra):
    whole = json.loads(run(binary, ["--report", "--json", *extra, scene]))
    some = json.loads(run(binary, ["--report", "--json", "--policies", ",".join(chosen),
                                   *extra, scene]))
    what = f"{scene} --report --policies {','.join(chosen)}"
    got = rows(some["policies"], chosen, what)
    for name, row in got.items():
        if row != rows(whole["policies"], every(scene), scene)[name]:
            fail(f"{what}: {name}'s row differs from the whole report's")
    if ("model" in whole) != ("model" in some):
        fail(f"{what}: the model's figures come and go")
    mine = model_rows(some.get("model"), chosen, what)
    if mine is not None:
        theirs = {p["name"]: p for p in whole["model"]["policies"]}
        for name, row in mine.items():
            if row != theirs[name]:
                fail(f"{what}: the model's {name} differs from the whole report's")
    for key in ("tokens", "budget", "target"):
        if whole.get(key) != some.get(key):
            fail(f"{what}: {key} differs")


def compare_sweep(binary, scene, chosen, budgets):
    whole = json.loads(run(binary, [f"--budget-sweep={budgets}", "--json", scene]))
    some = json.loads(run(binary, [f"--budget-sweep={budgets}", "--json", "--policies",
                                   ",".join(chosen), scene]))
    what = f"{scene} --budget-sweep --policies {','.join(chosen)}"
    for a, b in zip(whole["sweep"], some["sweep"]):
        theirs = rows(a["policies"], every(scene), scene)
        for name, row in rows(b["policies"], chosen, what).items():
            if row != theirs[name]:
                fail(f"{what}: {name} at B = {a['budget']} differs")
    good = some["budget_for_target"]
    if list(good) != [p for p in ALL if p in chosen]:
        fail(f"{what}: budget_for_target names {list(good)}")
    for name, value in good.items():
        if whole["budget_for_target"][name] != value:
            fail(f"{what}: {name}'s smallest budget differs")


def compare_trace(binary, scene, chosen):
    whole = [json.loads(l) for l in run(binary, ["--trace", scene]).splitlines()]
    some = [json.loads(l) for l in run(binary, ["--trace", "--policies", ",".join(chosen),
                                                scene]).splitlines()]
    what = f"{scene} --trace --policies {','.join(chosen)}"
    if len(whole) != len(some):
        fail(f"{what}: {len(some)} steps, expected {len(whole)}")
    keep = set(chosen) | {"h2o", "full"}
    for a, b in zip(whole, some):
        want = {k: v for k, v in a.items() if k not in ALL or k in keep}
        if "model" in want:
            # The model runs the policies chosen and its reference.
            runs = set(chosen) | {"full"}
            want["model"] = {k: {p: v for p, v in d.items() if p in runs}
                             for k, d in want["model"].items()}
        if want != b:
            fail(f"{what}: step {a['step']} differs from the whole trace's")
            break


def main():
    binary = sys.argv[1]
    cases = [
        ("scenes/cat_sat.json", ["h2o", "full"], []),
        ("scenes/cat_sat.json", ["window", "tova"], []),
        ("scenes/cat_sat_qkv.json", ["full", "snapkv", "observed", "observed-win"],
         ["--prompt", "3"]),
        ("tests/scenes/two_heads.json", ["random", "streaming"], ["--per-head"]),
        ("tests/scenes/generated_small.json", ["adakv", "pyramidkv-win", "snapkv-win"],
         ["--per-layer"]),
        ("models/stories260K/story_model.json", ["h2o", "full"], []),
        ("models/stories260K/story_model.json", ["tova"], []),
    ]
    for scene, chosen, extra in cases:
        compare_report(binary, scene, chosen, extra)
    compare_sweep(binary, "scenes/cat_sat_qkv.json", ["h2o", "window"], "1,3,5")
    compare_sweep(binary, "tests/scenes/two_heads.json", ["full", "adakv"], "2,4")
    compare_trace(binary, "scenes/cat_sat.json", ["window"])
    compare_trace(binary, "tests/scenes/two_heads.json", ["tova", "snapkv"])
    compare_trace(binary, "tests/scenes/generated_small.json", ["h2o", "full"])
    if failures:
        sys.exit(1)
    print(f"ok: {len(cases)} reports, 2 sweeps and 3 traces with fewer policies")


main()
