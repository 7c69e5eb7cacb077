#!/bin/sh
# model_report_test.sh: a model scene's report and sweep carry the model's
# figures in every format, and the model's target (--target ppl=R) means
# what it says.
#
# On models/stories260K/story_model.json:
# - `--report --json` is one JSON object with the model's run inside
#   ("model"); each policy's "meets_target" is its decode perplexity at
#   most R x the full cache's, for the default R (1.01) and for R = 1.2;
# - `--report --csv` has the model's columns: the exponential of minus the
#   mean of a policy's model_logprob over the steps after the prompt is the
#   JSON's ppl_decode (summed in step order, as drop.c sums them, so equal
#   to the bit), and a policy not run on the model has them empty;
# - the text report lists the attention table's rows full first, then the
#   matched policies (those that held no more than their budget: "matched"
#   in the JSON) by mean recall over the decode steps, best first, then
#   the others the same way (ties in the JSON's order), and the model
#   table's full first, then the matched runs by ppl decode, lowest first,
#   then the others; both name their targets;
# - `--budget-sweep --json` has the model's sweep inside; its "smallest"
#   is, per policy, the smallest budget at which its run was matched and
#   its perplexity meets the target, worked out here from its own numbers;
#   `--csv` has them per budget and policy, and the text's line names the
#   target and the same budgets, for the policies matched at some budget
#   only;
# - on models/stories260K/generate_model.json, whose text ends with the
#   prompt, no policy has a verdict and the sweep names no budget, but the
#   report scores each policy's own text by the full cache's model: its
#   perplexity, where it parts from the full cache's text and the tokens
#   they share, every policy with a row in the text; the CSV's model_kl
#   and model_full_top at each step that wrote a policy's text give the
#   JSON's KL spread (mean, median, p99, max) and top1_differs, and the
#   text's columns; model_matched_form is the JSON's matched_form.
# Python's json and csv modules read everything; without python3 the test
# skips (77).
#
# Usage: tests/model_report_test.sh H2O_TUI   (from the source root)
set -u
command -v python3 >/dev/null 2>&1 || { echo "python3 not installed: skipped"; exit 77; }
exec python3 - "$1" <<'PY'
import csv, io, json, math, re, subprocess, sys

bin = sys.argv[1]
scene = "models/stories260K/story_model.json"
checked = 0


# Each command's output, run once however many checks read it: every run
# of the model scene runs its model once per policy (and budget).
outputs = {}


def run(*args):
    key = (scene, *args)
    if key not in outputs:
        outputs[key] = subprocess.run([bin, "--quiet", *args, scene], check=True,
                                      capture_output=True, text=True).stdout
    return outputs[key]


def check(what, ok):
    global checked
    checked += 1
    if not ok:
        sys.exit(f"FAIL: {what}")


def table_rows(text, header):
    """The policy names of the table whose header line starts with HEADER."""
    lines = text.splitlines()
    start = next(i for i, l in enumerate(lines) if l.startswith(header))
    names = []
    for line in lines[start + 1:]:
        if not line.strip() or line.startswith("not "):
            break
        if not line.startswith(" "):
            names.append(line.split()[0])
    return names


# The report: JSON, CSV and text.
for ratio in (None, 1.2):
    extra = ["--target", f"ppl={ratio}"] if ratio else []
    r = ratio or 1.01
    js = json.loads(run("--report", "--json", *extra))
    model = js["model"]
    check("model target", model["target"] == {"figure": "ppl_decode", "at_most_times_full": r})
    pols = {p["name"]: p for p in model["policies"]}
    full = pols["full"]["ppl_decode"]
    for p in model["policies"]:
        check(f"ppl={r} {p['name']} meets_target",
              p["meets_target"] == (p["ppl_decode"] <= r * full))
    check("some policy misses 1.01", ratio or not all(p["meets_target"] for p in pols.values()))

    text = run("--report", *extra)
    check(f"text names the model's target ppl <= {r:g} x full", f"ppl <= {r:g} x full" in text)
    check("text names the attention target", "(the attention target, recall >= 0.95)" in text)
    attn = table_rows(text, "policy        budget  peak/kv  mean/kv peak bytes")
    means = {p["name"]: p["mean_attn_recall_decode"] for p in js["policies"]}
    matched = {p["name"]: p["matched"] for p in js["policies"]}
    order = [p["name"] for p in js["policies"]]
    want = ["full"] + sorted((n for n in order if n != "full"),
                             key=lambda n: (not matched[n], -means[n], order.index(n)))
    check(f"attention rows {attn} are {want}", attn == want)
    check("some attention rows are not matched", not all(matched[n] for n in order[1:]))
    rows = table_rows(text, "policy        budget  peak/kv  mean/kv matched   ppl all")
    want = ["full"] + sorted((n for n in pols if n != "full"),
                             key=lambda n: (not pols[n]["matched"], pols[n]["ppl_decode"],
                                            order.index(n)))
    check(f"model rows {rows} are {want}", rows == want)
    for name in pols:
        if name != "full" and not pols[name]["matched"]:
            check(f"{name} says what it held",
                  f"not matched: {name} keeps every token after the prompt: holds "
                  f"{pols[name]['held']['peak_per_kv_head']:.0f}, not 32" in text)
    for line in text.splitlines():
        if line.split()[:1] and line.split()[0] in pols and line.rstrip().endswith(("met", "missed")):
            name = line.split()[0]
            check(f"{name} met column", line.rstrip().endswith(
                " met" if pols[name]["meets_target"] else " missed"))

csv_rows = list(csv.DictReader(io.StringIO(run("--report", "--csv"))))
js = json.loads(run("--report", "--json"))
prompt, n = js["model"]["prompt"], js["tokens"]
for pol in js["policies"]:
    name = pol["name"]
    mine = [row for row in csv_rows if row["policy"] == name]
    check(f"{name} csv steps", [int(row["step"]) for row in mine] == list(range(1, n + 1)))
    m = next((p for p in js["model"]["policies"] if p["name"] == name), None)
    if m is None:
        check(f"{name} not run: empty model columns",
              {(row["model_logprob"], row["model_top"]) for row in mine} == {("", "")})
        continue
    # Predictions prompt - 1 .. n - 2 are those after the prompt: the
    # prediction made after step t is step t's row.
    s = 0.0
    for row in mine[prompt - 1:n - 1]:
        s += float(row["model_logprob"])
    check(f"{name} csv ppl_decode {math.exp(-s / (n - prompt))} is the JSON's {m['ppl_decode']}",
          math.exp(-s / (n - prompt)) == m["ppl_decode"])
    check(f"{name} last step has no logprob", mine[-1]["model_logprob"] == "")
    check(f"{name} top tokens", all(row["model_top"].isdigit() for row in mine))

# The sweep.
budgets = [8, 64]
blist = "--budget-sweep=" + ",".join(map(str, budgets))
for ratio in (None, 1.05):
    extra = ["--target", f"ppl={ratio}"] if ratio else []
    r = ratio or 1.01
    js = json.loads(run(blist, "--json", *extra))
    model = js["model"]
    check("sweep target_ratio", model["target_ratio"] == r)
    check("sweep budgets", [b["total"] for b in model["budgets"]] == budgets)
    full = model["ppl_full"]
    for name, got in model["smallest"].items():
        meets = [b["total"] for b in model["budgets"]
                 if b[name] <= r * full and b["matched"][name]]
        check(f"ppl={r} smallest {name}: {got}", got == (min(meets) if meets else None))
    text = run(blist, *extra)
    last = next(l for l in text.splitlines()
                if l.startswith("smallest budget meeting the model's target"))
    check(f"sweep text's line {last!r}",
          last.startswith(f"smallest budget meeting the model's target, ppl <= {r:g} x full"))
    for name, got in model["smallest"].items():
        ever = any(b["matched"][name] for b in model["budgets"])
        check(f"sweep text {name}",
              (f"{name} {got if got else 'none'}" in last) == ever)
    check("attention line names its target",
          "smallest budget meeting the attention target, mean recall >= 0.95 (decode steps), "
          "matched rows only:" in text)
    for line in text.splitlines():
        if line.startswith("smallest budget meeting the attention target"):
            for b in js["sweep"]:
                for p in b["policies"]:
                    if p["matched"] is False:
                        check(f"{p['name']} unmatched at {b['budget']['total']}",
                              f" {p['name']} {b['budget']['total']}" not in line)

rows = list(csv.DictReader(io.StringIO(run(blist, "--csv"))))
js = json.loads(run(blist, "--json"))
model = js["model"]
for b in model["budgets"]:
    for row in (x for x in rows if int(x["budget"]) == b["total"]):
        name = row["policy"]
        if name in b:
            check(f"sweep csv {b['total']} {name}", float(row["model_ppl_decode"]) == b[name])
            check(f"sweep csv {b['total']} {name} meets",
                  row["model_meets_target"] == str(b[name] <= 1.01 * model["ppl_full"]).lower())
        elif name == "full":
            check("sweep csv full", float(row["model_ppl_decode"]) == model["ppl_full"])
        else:
            check(f"sweep csv {name} empty", row["model_ppl_decode"] == "")
# A scene whose text ends with the prompt (the model writes the rest): no
# decoded text to judge, so no verdicts and no smallest budget.
scene = "models/stories260K/generate_model.json"
js = json.loads(run("--report", "--json"))
check("generating: no verdicts",
      {p["meets_target"] for p in js["model"]["policies"]} == {None})
check("generating: no decode perplexity",
      {p["ppl_decode"] for p in js["model"]["policies"]} == {None})
made = js["model"]["generated"]
check("generating: 100 tokens made", made == 100)
gen = {p["name"]: p["generated"] for p in js["model"]["policies"]}
check("generating: every policy scored", len(gen) == len(js["policies"]) and
      all(isinstance(g["ppl_by_full"], float) and g["ppl_by_full"] >= 1 for g in gen.values()))
check("generating: the full cache never parts from itself",
      gen["full"]["first_divergence_step"] is None and gen["full"]["common_prefix"] == made)
for name, g in gen.items():
    step = g["first_divergence_step"]
    check(f"generating: {name} shares the tokens before it parts",
          g["common_prefix"] == (made if step is None else step - 1 - (js["tokens"] - made)))
text = run("--report")
rows = table_rows(text, "policy        budget  peak/kv  mean/kv matched ppl prompt  text ppl")
check(f"generating: a row per policy {rows}", sorted(rows) == sorted(gen))
sweep = json.loads(run("--budget-sweep=8,16", "--json"))["model"]
check("generating: the sweep's perplexities are null",
      sweep["ppl_full"] is None and
      all(v is None for b in sweep["budgets"] for k, v in b.items()
          if k not in ("total", "peak_per_kv_head", "matched")))
# The model's own tokens have no log-probability of a given next token.
rows = list(csv.DictReader(io.StringIO(run("--report", "--csv"))))
written = [r for r in rows if r["policy"] == "h2o" and r["model_logprob"] == ""]
check("generating: no log-probability for the model's own tokens",
      len(written) > 90 and all(r["model_top"] != "" for r in written))
# Each step that wrote a policy's text (steps given .. n - 1: the
# prediction after step s is step s's row) has its KL from the full
# model reading the same text and that model's top token; their spread
# and the share of other tops are the JSON's and the text's.
n = js["tokens"]
given = n - made
lines = {l.split()[0]: l.split() for l in text.splitlines() if l.split()[:1] and l.split()[0] in gen}
pols = {p["name"]: p for p in js["model"]["policies"]}
for name, g in gen.items():
    mine = [r for r in rows if r["policy"] == name]
    steps = mine[given - 1:n - 1]
    kl = [float(r["model_kl"]) for r in steps]
    s = 0.0
    for v in kl:
        s += v
    v = sorted(kl)
    c = len(v)
    want = {"mean": s / c, "median": v[c // 2] if c % 2 else (v[c // 2 - 1] + v[c // 2]) / 2,
            "p99": v[math.ceil(0.99 * c) - 1], "max": v[-1]}
    check(f"generating: {name} kl {g['kl']} from the csv's {want}", g["kl"] == want)
    check(f"generating: {name} kl after the text's end is empty", mine[-1]["model_kl"] == "")
    other = sum(r["model_top"] != r["model_full_top"] for r in steps)
    check(f"generating: {name} top1_differs", g["top1_differs"] == 1 - (c - other) / c)
    check(f"generating: {name} full's own", name != "full" or (other == 0 and want["max"] == 0))
    cols = lines[name]
    check(f"generating: {name} text {cols[-3:]}",
          cols[-3:] == [f"{100 * g['top1_differs']:.1f}%", f"{want['mean']:.4f}",
                        f"{want['p99']:.4f}"])
    form = pols[name].get("matched_form", "")
    check(f"generating: {name} model_matched_form",
          {r["model_matched_form"] for r in mine} == {form})
check("generating: some policy differs from the full model",
      any(g["kl"]["mean"] > 0 for g in gen.values()))
last = run("--budget-sweep=8,16").rstrip().splitlines()[-1]
check(f"generating: sweep's last line {last!r}", last.endswith(
    "none to judge, the text has no tokens after the prompt"))
print(f"{checked} checks")
PY
