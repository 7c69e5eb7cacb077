#!/usr/bin/env python3
"""Every number a lesson names is a number of its scene.

For each scene on the lesson path, every decimal number written in its
"watch" paragraph and its step notes (1.78, 0.067, 0.9985) must be, at the
precision written, one the scene itself holds or the engine computes: a
weight, a score or a figure of the trace (a note's numbers at its own step),
a number of the scene file, or a dot product q . k of a vector scene. A
lesson that says "sat (0.91) loses to cat (1.58)" cannot drift from what
the screen shows. A note's numbers may also be the step before's (the old
score of a sum) or the next step's. The trace is also taken with one more
recent slot, for lessons that say what } does, and at the budgets the keys
after each note's "Try" lead to, for what its experiment shows.

Every experiment a note suggests ("Try [ [") is also run as a reader would:
headless, to the note's step (and the model panel, t, on a model scene),
then the suggested keys. The header must then show the budgets they lead
to, every number the suggestion names must be on the screen before or
after the keys, and what it says they show (EFFECTS: a pattern per claim,
on the frame after the keys or after more keys) must be there; a "Try" with
no entry in EFFECTS is an error, so no experiment goes unchecked. Lesson 2's
step 5 must show the explainer's table (EXPLAINER) as it says, and lesson
1 must say what recall is before a frame shows the word. A model's
figures are read from its report's rows per step (model_values), at its
own budgets, not from its trace. Only the policies a lesson names are run
(--policies; h2o and the full cache always): a number it quotes of a policy
is of one it names, and the others would only cost time and give a number
more chances to match by accident. Usage: lesson_claims.py H2O_TUI
SOURCE_ROOT
"""
import csv
import json
import math
import os
import re
import subprocess
import sys

# The budget keys a note suggests: "Try { {", "Try ]".
TRY = re.compile(r"Try ((?:[\[\]{}](?: |(?=[^ ])))+)")
NUMBER = re.compile(r"(?<![\w.])(\d+\.\d+)(?![\w.]*\d)")
# The policies, by the names --policies takes (h2o-tui --help).
POLICIES = ["full", "h2o", "window", "streaming", "tova", "knorm", "snapkv",
            "snapkv-win", "pyramidkv", "pyramidkv-win", "adakv", "adakv-win", "observed",
            "observed-win", "random", "keydiff",
            "expected"]


# What each suggested experiment shows, by lesson and step: (the keys
# pressed after the suggestion's, [patterns that frame must match]).
LIVE = r"[█▉▊▋▌▍▎▏]"  # a live row's bar: held in the cache, not evicted
EFFECTS = {
    ("scenes/lesson_01_heavy_recent.json", 5): [
        ("", [r"H2O CACHE  5 of 5 tokens", r"EVICTED  0 ",
              r"\d sat +" + LIVE + r"[^│\n]*│", r"\n At heavy 2 \+ recent 2 "]),
    ],
    ("scenes/lesson_02_scores.json", 5): [
        ("", [r"✗ 1 The +left the window at step 5 ", r"0 <s> +left the window at step 4 "]),
        ("right", [r"\n At 4 \+ 3 recall was 1\.00, now 0\.70: The \(0\.20 of it\)"]),
    ],
    ("scenes/lesson_03_evict.json", 5): [
        ("", [r"H2O CACHE  5 of 5 tokens", r"EVICTED  0 ", r"\d sat +" + LIVE + r"[^│\n]*│",
              r"\n At heavy 2 \+ recent 2 [^\n]*sat went at this step"]),
    ],
    ("scenes/lesson_04_online.json", 6): [
        ("", [r"RECENT  0 of 0", r"✗ +5 mat +< [\d.]+ \S+ at step 6 "]),
        ("right", [r"\n At 2 \+ 2 recall was 0\.96, now 0\.24: mat \(0\.70 of it\)"]),
    ],
    ("scenes/lesson_05_qk.json", 5): [
        ("", [r"H2O CACHE  3 of 3 tokens", r"1 cat +< [\d.]+ \S+ at step 4 ",
              r"\n H2O renormalises: its softmax shares 1 among the 4 tokens it holds[^\n]*"
              r"gets more \(it 0\.37, full 0\.24\)"]),
    ],
    ("scenes/lesson_06_kv_cache.json", 5): [
        ("", [r"H2O CACHE  5 of 5 tokens, 40 KV", r"\d sat +" + LIVE + r"[^│\n]*│",
              r"\n At heavy 2 \+ recent 2 recall was 1\.00 too; sat went at this step"]),
    ],
    ("models/stories260K/story_model.json", 66): [
        ("", [r"perplexity so far: full 2\.80  h2o 2\.92 ",
              r"\n At heavy 16 \+ recent 16 recall was 0\.75, now 0\.65"]),
    ],
}
# Lesson 2's step 5 is the explainer's table (section 7): old scores 1.0
# 0.7 0.2, new attention 0.2 0.5 0.3, new scores 1.2 1.2 0.5, a row each.
EXPLAINER = ("scenes/lesson_02_scores.json", 5,
             [("The", "1.00 + 0.20 = 1.20"), ("cat", "0.70 + 0.50 = 1.20"),
              ("sat", "0.20 + 0.30 = 0.50")])


def frames(binary, root, path, keys, size="120x36"):
    """The headless frames (SIZE) after each of KEYS, the first at step 0."""
    run = subprocess.run([binary, "--headless", "--size", size, "--keys", ",".join(keys), path],
                         cwd=root, capture_output=True, text=True, check=True)
    return re.split(r"(?m)^--- step [^\n]*---\n", run.stdout)[1:]


def to_step(step, model):
    """The keys that go to STEP (its digits, Enter), and t on a model scene."""
    return list(str(step)) + ["enter"] + (["t"] if model else [])


def check_explainer(binary, root):
    """The explainer's table is whole, every row of it in both panels, at
    80x24 (where the sums lose their spaces, "1.00+0.20=1.20") and 120x36."""
    path, step, rows = EXPLAINER
    bad = 0
    for size in ("80x24", "120x36"):
        screen = frames(binary, root, path, to_step(step, False), size)[-1]
        for token, sum_ in rows:
            # The H2O panel's row (left of the rule) and the full cache's.
            want = re.escape(sum_).replace(r"\ ", " ?")
            found = re.findall(r"\d " + re.escape(token) + r" +" + LIVE + r"+ +" + want + r" +│", screen)
            if len(found) < 1 or not re.search(r"│ +\d " + re.escape(token) + r" +" + LIVE + r"+ +" + want, screen):
                print(f"{path}: {size}: step {step} does not show the explainer's {token} {sum_} in both panels")
                bad += 1
    return bad


def check_defined(binary, root, path="scenes/lesson_01_heavy_recent.json", word="recall"):
    """Lesson 1 says what WORD means (its watch or a note: the strip of
    lesson text) on a frame before or at the first that shows the word
    elsewhere, stepping from 0 to the end, at 80x24 and 120x36."""
    bad, shown = 0, 0
    for size in ("80x24", "120x36"):
        run = subprocess.run([binary, "--headless", "--size", size, path], cwd=root,
                             capture_output=True, text=True, check=True)
        defined = False
        for frame in re.split(r"(?m)^--- step [^\n]*---\n", run.stdout)[1:]:
            strip = re.search(r"── (what to watch|at step \d+) [^\n]*\n(.*?)\n─", frame, re.S)
            text = strip.group(2) if strip else ""
            rest = frame.replace(text, "") if text else frame
            defined = defined or re.search(word + r"[^.:;]{0,30} is ", text) is not None
            if re.search(r"(?<![\w])" + word + r"(?![\w])", rest):
                shown += 1
                if not defined:
                    print(f"{path}: {size}: a frame shows {word} before the lesson says what it is")
                    bad += 1
                break
    if not shown:
        print(f"{path}: no frame shows {word}: this check checks nothing")
        bad += 1
    return bad


def check_tries(binary, root, path, scene):
    """Run every experiment SCENE's notes suggest; see the docstring."""
    bad = 0
    model = "model" in scene
    for step, note in scene.get("notes", {}).items():
        if note.count("Try ") != len(TRY.findall(note)):
            print(f"{path}: notes.{step}: a \"Try\" whose keys this test cannot run")
            bad += 1
        for keys in TRY.findall(note):
            keys = keys.split()
            where = f"{path}: notes.{step}: Try {' '.join(keys)}"
            effects = EFFECTS.get((path, int(step)))
            if effects is None:
                print(f"{where}: no check of what it shows in EFFECTS")
                bad += 1
                continue
            heavy, recent = scene["heavy"], scene["recent"]
            for key in keys:
                heavy = max(heavy + {"[": -1, "]": 1}.get(key, 0), 0)
                recent = max(recent + {"{": -1, "}": 1}.get(key, 0), 0)
            go = to_step(step, model)
            shown = frames(binary, root, path, go + keys)
            before, after = shown[len(go)], shown[-1]
            if f"heavy {heavy} + recent {recent}" not in after.split("\n")[0]:
                print(f"{where}: the header does not show heavy {heavy} + recent {recent}")
                bad += 1
            screens = [before, after]
            for more, patterns in effects:
                screen = frames(binary, root, path, go + keys + more.split())[-1] if more else after
                screens.append(screen)
                for pattern in patterns:
                    if not re.search(pattern, screen):
                        print(f"{where}{' then ' + more if more else ''}: the screen does not show /{pattern}/")
                        bad += 1
            said = note[note.index("Try " + " ".join(keys)):]
            for written in NUMBER.findall(said):
                if not any(re.search(r"(?<![\d.])" + re.escape(written) + r"(?![\d])", s) for s in screens):
                    print(f"{where}: {written} is on no screen of the experiment")
                    bad += 1
    return bad


def named_policies(scene):
    """--policies for the policies SCENE's text names, and H2O."""
    text = " ".join([scene.get("watch", "")] + list(scene.get("notes", {}).values()))
    named = [p for p in POLICIES
             if re.search(r"(?<![\w-])" + re.escape(p) + r"(?![\w-])", text, re.I)]
    return ["--policies", ",".join(dict.fromkeys(["h2o"] + named))]


def numbers(value, out):
    if isinstance(value, bool):
        return
    if isinstance(value, (int, float)):
        out.append(float(value))
    elif isinstance(value, list):
        for v in value:
            numbers(v, out)
    elif isinstance(value, dict):
        for v in value.values():
            numbers(v, out)


def trace(binary, root, path, extra):
    run = subprocess.run([binary, "--trace", "--quiet", *extra, path], cwd=root,
                         capture_output=True, text=True, check=True)
    return [json.loads(line) for line in run.stdout.splitlines()]


def model_values(binary, root, path, prompt, chosen):
    """A model's figures, without its weights (millions of them, which
    would match any number): each step's metrics, whole and per key/value
    head, each policy's mean recall over the steps after the prompt and
    over all steps, and a model scene's perplexity per policy, as a lesson
    quotes them. They come from --report --csv --per-head, a row per step,
    policy and head with exactly these figures (about 10 MB for the model
    lesson), not from the trace, whose attended sets, weights and scores
    (350 MB of JSON) no claim reads."""
    run = subprocess.run([binary, "--report", "--csv", "--per-head", "--quiet", *chosen, path],
                         cwd=root, capture_output=True, text=True)
    if run.returncode != 0:
        raise SystemExit(f"{path}: --report --csv failed: {run.stderr.strip()}")
    steps, heads, logprob = {}, {}, {}
    for row in csv.DictReader(run.stdout.splitlines()):
        step, name = int(row["step"]), row["policy"]
        # Figures only: the likeliest token's id (model_top) is no figure.
        values = [float(v) for k, v in row.items()
                  if k not in ("step", "policy", "head", "model_top") and v != ""]
        steps.setdefault(step, []).extend(values)
        if row["head"] == "all":
            # A model run's log-probability of the text's next token.
            if row.get("model_logprob"):
                logprob.setdefault(name, []).append((step, float(row["model_logprob"])))
        else:
            heads.setdefault((name, step), []).append(float(row["attn_recall"]))
    after, every = {}, {}
    for (name, step), recalls in heads.items():
        recall = sum(recalls) / len(recalls)
        steps[step].append(recall)
        every.setdefault(name, []).append(recall)
        if step > prompt:
            after.setdefault(name, []).append(recall)
    means = [sum(v) / len(v) for v in list(after.values()) + list(every.values()) if v]
    # And each policy's perplexity, as --report gives it: over every
    # prediction, and over those from the prompt's end on.
    for runs in logprob.values():
        for chosen in ([lp for _, lp in runs], [lp for t, lp in runs if t >= prompt]):
            if chosen:
                means.append(math.exp(-sum(chosen) / len(chosen)))
    return steps, means


def matches(written, values):
    places = len(written.split(".")[1])
    target = float(written)
    return any(abs(v - target) <= 0.5 * 10 ** -places + 1e-9 for v in values)


def main():
    binary, root = sys.argv[1], sys.argv[2]
    with open(f"{root}/scenes/lessons.txt") as f:
        lessons = [l.strip() for l in f if l.strip() and not l.startswith("#")]
    bad = 0
    for name in lessons:
        path = os.path.normpath(f"scenes/{name}")
        with open(f"{root}/{path}") as f:
            scene = json.load(f)
        everywhere = []
        numbers(scene, everywhere)
        toks = scene.get("tokens", [])
        for a in toks:
            for b in toks:
                if "q" in a and "k" in b:
                    everywhere.append(sum(x * y for x, y in zip(a["q"], b["k"])))
        steps = {}
        # A model's trace is large: its figures only, at its own budgets.
        # (A model scene gives no "layers" or "heads": its model has them.)
        layered = "model" in scene or scene.get("layers", 1) * scene.get("heads", 1) > 1
        variants = [[]] if layered else [[], ["--recent", str(scene["recent"] + 1)]]
        # And at the budgets each note's "Try" keys lead to.
        for note in ([] if layered else scene.get("notes", {}).values()):
            for keys in TRY.findall(note):
                heavy, recent = scene["heavy"], scene["recent"]
                for key in keys.split():
                    heavy += {"[": -1, "]": 1}.get(key, 0)
                    recent += {"{": -1, "}": 1}.get(key, 0)
                heavy, recent = max(heavy, 0), max(recent, 0)
                if heavy + recent >= 1:
                    variants.append(["--heavy", str(heavy), "--recent", str(recent)])
        if layered:
            steps, means = model_values(binary, root, path, scene.get("prompt", 0),
                                        named_policies(scene))
            # Its watch names whole-scene figures; a note, its step's.
            everywhere.extend(means)
            variants = []
        for extra in variants:
            for record in trace(binary, root, path, extra + named_policies(scene)):
                values = []
                numbers(record, values)
                steps.setdefault(record["step"], []).extend(values)
                everywhere.extend(values)
        claims = [("watch", scene.get("watch", ""), everywhere)]
        for step, note in scene.get("notes", {}).items():
            # A model's experiment is checked on its screens (check_tries),
            # not against the trace, which is at the scene's budgets only.
            if layered and "Try " in note:
                note = note[:note.index("Try ")]
            # A note may name the step before's numbers (the old score a
            # sum starts from) and the next step's (what it leads to).
            near = [v for t in (int(step) - 1, int(step), int(step) + 1)
                    for v in steps.get(t, [])]
            claims.append((f"notes.{step}", note, near))
        for where, text, values in claims:
            for written in NUMBER.findall(text):
                if not matches(written, values):
                    print(f"{path}: {where}: {written} is not a number of this scene")
                    bad += 1
        bad += check_tries(binary, root, path, scene)
    bad += check_explainer(binary, root)
    bad += check_defined(binary, root)
    if bad:
        sys.exit(1)
    print(f"ok: the numbers of {len(lessons)} lessons")


main()
