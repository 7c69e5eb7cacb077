#!/bin/sh
# csv_test.sh: --csv holds the same numbers as --json.
#
# For --report, the CSV has a row per step and policy (and head): its last
# step's tokens and KV, the means of its figure steps (those after the
# prompt, or every step with --with-prompt, as the JSON's "figures" says;
# summed in step order, as the report sums them, so equal to the bit), the
# largest error, the first step that misses the target and the tokens held
# (peak and mean per kv cache from the prompt's end) must be the JSON's. For
# --budget-sweep, each row per budget and policy (and head) must be the
# JSON's figures of that budget. Every row's matched_form is the JSON's
# "matched_form" of its policy (empty when it has none), and some row names
# one. Python's csv and json modules read both; without python3 the test
# skips (77).
#
# Usage: tests/csv_test.sh H2O_TUI   (from the source root, as Meson runs it)
set -u
command -v python3 >/dev/null 2>&1 || { echo "python3 not installed: skipped"; exit 77; }
exec python3 - "$1" <<'PY'
import csv, io, json, subprocess, sys

bin = sys.argv[1]
checked = 0
forms = 0


def run(*args):
    return subprocess.run([bin, *args], check=True, capture_output=True, text=True).stdout


def num(s):
    return None if s == "" else float(s)


def same(what, a, b):
    global checked
    checked += 1
    if a != b:
        sys.exit(f"FAIL: {what}: CSV {a!r}, JSON {b!r}")


def missed(target, v):
    return v < target["value"] if target["at_least"] else v > target["value"]


def check_report(args, per_head):
    extra = ["--per-head"] if per_head else []
    rows = list(csv.DictReader(io.StringIO(run("--report", "--csv", *extra, *args))))
    js = json.loads(run("--report", "--json", *extra, *args))
    # Each (policy, head)'s rows, in the CSV's order, read once.
    by = {}
    for r in rows:
        by.setdefault((r["policy"], r.get("head")), []).append(r)
    target, n = js["target"], js["tokens"]
    fig = js["figures"]
    first, held_from = fig["from"], fig["held_from"]
    suffix = "_decode" if fig["over"] == "decode" else ""
    for pol in js["policies"]:
        heads = [("all", pol)] if per_head and "heads" in pol else [(None, pol)]
        heads += [(str(h), o) for h, o in enumerate(pol.get("heads", []))]
        for head, want in heads:
            mine = by.get((pol["name"], head), [])
            what = f"{' '.join(args)} {pol['name']} head {head}"
            same(what + " steps", [int(r["step"]) for r in mine], list(range(1, n + 1)))
            # An unmatched policy's matched form, on each of its rows.
            form = pol.get("matched_form", "")
            same(what + " matched_form", {r["matched_form"] for r in mine}, {form})
            count_form(form)
            same(what + " tokens", int(mine[-1]["tokens"]), want["tokens"])
            same(what + " kv", int(mine[-1]["kv"]), want["kv"])
            steps = [r for r in mine if int(r["step"]) >= first]
            for key, jkey in [("out_err", "mean_out_err"), ("out_cos", "mean_out_cos"),
                              ("attn_recall", "mean_attn_recall")]:
                jkey += suffix
                if jkey not in want:
                    same(what + " " + key + " empty", {r[key] for r in mine}, {""})
                    continue
                s = 0.0
                for r in steps:
                    s += float(r[key])
                same(what + " mean " + key, s / len(steps), want[jkey])
            if "max_out_err" + suffix in want:
                same(what + " max err", max(float(r["out_err"]) for r in steps),
                     want["max_out_err" + suffix])
            miss = next((int(r["step"]) for r in steps
                         if missed(target, float(r[target["figure"]]))), None)
            same(what + " first loss", miss, want["first_loss_step"])
            held = [int(r["tokens"]) for r in mine if int(r["step"]) >= held_from]
            # The CSV's tokens add every kv cache of the row; the JSON's
            # are per cache: the peak tells how many caches there are.
            caches = round(max(held) / want["held"]["peak_per_kv_head"])
            same(what + " held peak", max(held) / caches, want["held"]["peak_per_kv_head"])
            s = 0.0
            for t in held:
                s += t
            same(what + " held mean", s / len(held) / caches, want["held"]["mean_per_kv_head"])


def count_form(form):
    global forms
    forms += form != ""


def check_sweep(args, per_head):
    extra = ["--per-head"] if per_head else []
    rows = list(csv.DictReader(io.StringIO(run("--budget-sweep", *args, "--csv", *extra))))
    js = json.loads(run("--budget-sweep", *args, "--json", *extra))
    suffix = "_decode" if js["figures"]["over"] == "decode" else ""
    expect = []
    for entry in js["sweep"]:
        b = entry["budget"]
        for pol in entry["policies"]:
            heads = [("all" if per_head and "heads" in pol else None, pol)]
            heads += [(str(h), o) for h, o in enumerate(pol.get("heads", []))]
            for head, want in heads:
                held = want["held"]
                expect.append((b["total"], b["heavy"], b["recent"], b["sinks"], pol["name"],
                               head, want["tokens"], want["kv"], held["peak_per_kv_head"],
                               held["mean_per_kv_head"], held["peak_bytes"],
                               held["mean_bytes"], want["matched"], pol.get("matched_form"),
                               want.get("mean_out_err" + suffix),
                               want.get("max_out_err" + suffix),
                               want.get("mean_out_cos" + suffix),
                               want["mean_attn_recall" + suffix], want["first_loss_step"]))
    got = [(int(r["budget"]), int(r["heavy"]), int(r["recent"]), int(r["sinks"]), r["policy"],
            r.get("head"), int(r["tokens"]), int(r["kv"]), float(r["peak_per_kv_head"]),
            float(r["mean_per_kv_head"]), float(r["peak_bytes"]), float(r["mean_bytes"]),
            {"true": True, "false": False, "": None}[r["matched"]], r["matched_form"] or None,
            num(r["mean_out_err" + suffix]), num(r["max_out_err" + suffix]),
            num(r["mean_out_cos" + suffix]), float(r["mean_attn_recall" + suffix]),
            None if r["first_loss_step"] == "" else int(r["first_loss_step"]))
           for r in rows]
    same(" ".join(args) + " sweep rows", got, expect)
    for row in got:
        count_form(row[13] or "")


check_report(["scenes/cat_sat.json"], False)
check_report(["--target", "err=0.05", "scenes/cat_sat_qkv.json"], False)
check_report(["--target", "cos=0.999", "--heavy", "1", "scenes/cat_sat.json"], False)
check_report(["scenes/lesson_01_heavy_recent.json"], False)
check_report(["tests/scenes/two_heads.json"], True)
check_report(["scenes/heads_8.json"], True)
check_report(["--prompt", "3", "scenes/cat_sat_qkv.json"], False)
check_report(["--prompt", "3", "--with-prompt", "scenes/cat_sat_qkv.json"], False)
check_report(["--prompt", "2", "tests/scenes/two_heads.json"], True)
check_report(["--prompt", "4", "tests/scenes/two_heads.json"], True)
check_sweep(["1,2,0.5", "scenes/cat_sat_qkv.json"], False)
check_sweep(["--target", "cos=0.99", "--split", "0.25", "scenes/cat_sat.json"], False)
check_sweep(["1,3", "scenes/lesson_01_heavy_recent.json"], False)
check_sweep(["1,2", "tests/scenes/two_heads.json"], True)
check_sweep(["2,4", "--prompt", "3", "scenes/cat_sat_qkv.json"], False)
check_sweep(["2,4", "--prompt", "3", "--with-prompt", "scenes/cat_sat_qkv.json"], False)
if forms == 0:
    sys.exit("FAIL: no row named a matched form")
print(f"{checked} figures equal, {forms} matched forms named")
PY
