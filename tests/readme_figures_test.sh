#!/bin/sh
# readme_figures_test.sh: the figures scenes/README.md quotes are the
# program's, not typed.
#
# Every table row of scenes/README.md that opens a scene
# (`build/h2o-tui SCENE`) and says "attention recall after the prompt:
# NAME V, NAME V, ..." must hold, for each NAME (H2O, window, TOVA, or any
# policy's own name), the policy's mean attention recall over the decode
# steps that `h2o-tui --report --json SCENE` prints, to the two decimals
# written. Without python3 the test skips (77).
#
# Usage: tests/readme_figures_test.sh H2O_TUI   (from the source root)
set -u
command -v python3 >/dev/null 2>&1 || { echo "python3 not installed: skipped"; exit 77; }
exec python3 - "$1" <<'PY'
import json, re, subprocess, sys

bin = sys.argv[1]
names = {"H2O": "h2o", "TOVA": "tova", "StreamingLLM": "streaming"}
checked = 0
for line in open("scenes/README.md", encoding="utf-8"):
    scene = re.search(r"`build/h2o-tui (\S+\.json)`", line)
    said = re.search(r"attention recall after the prompt: ((?:[A-Za-z0-9-]+ \d\.\d\d(?:, )?)+)", line)
    if not scene or not said:
        continue
    js = json.loads(subprocess.run([bin, "--quiet", "--report", "--json", scene.group(1)],
                                   check=True, capture_output=True, text=True).stdout)
    if js["figures"]["over"] != "decode":
        sys.exit(f"FAIL: {scene.group(1)}: the report's figures are not the decode steps'")
    recall = {p["name"]: p["mean_attn_recall_decode"] for p in js["policies"]}
    for name, value in re.findall(r"([A-Za-z0-9-]+) (\d\.\d\d)", said.group(1)):
        got = recall[names.get(name, name)]
        if f"{got:.2f}" != value:
            sys.exit(f"FAIL: scenes/README.md says {name} {value} on {scene.group(1)}; "
                     f"--report prints {got:.4f}")
        checked += 1
if checked < 9:
    sys.exit(f"FAIL: only {checked} figures found in scenes/README.md")
print(f"{checked} figures as the program prints them")
PY
