#!/usr/bin/env bash
# Regenerates every file in datasets/ offline (see datasets/README.md for what each holds).
#   bash datasets/build.sh            # gold-path records and agent rollouts
#   SKIP_AGENT=1 bash datasets/build.sh   # gold-path records only (minutes, no LM)
# Gold paths are pinned in datasets/gold/*.json, so a rebuild picks the same paths; agent
# rollouts are greedy (temperature 0) on the embedded local models.
set -euo pipefail
cd "$(dirname "$0")/.."
D=datasets
SW=(--env scienceworld --gold-cache $D/gold/scienceworld.json)
TWX=(--env twx --gold-cache $D/gold/twx.json)
# Small TextWorld-Express games for agent rollouts: a 1.5B model can win some of them in 10 steps.
SMALL=(--params "twc:numLocations=1,numItemsToPutAway=1,includeDoors=0"
       --params "coin:numLocations=3,numDistractorItems=0,includeDoors=0"
       --params "cookingworld:numLocations=1,numIngredients=1,numDistractorItems=0,includeDoors=0"
       --task-types twc,coin,cookingworld --agent-only --max-steps 10)

rbdspy data build "${SW[@]}" --split train --n 240 --seed 0 --out $D/scienceworld-train.jsonl
rbdspy data build "${SW[@]}" --split dev --n 100 --seed 1 --out $D/scienceworld-dev.jsonl
rbdspy data build "${TWX[@]}" --split train --n 80 --seed 0 --out $D/twx-train.jsonl
rbdspy data build "${TWX[@]}" --split dev --n 40 --seed 1 --out $D/twx-dev.jsonl
# Quests of one persistent TextWorld world (world 1, generated from seeds; no gold cache needed).
rbdspy data build --env textworld --split train --n 40 --seed 0 --out $D/textworld-house-train.jsonl
rbdspy data build --env textworld --split dev --n 40 --seed 0 --out $D/textworld-house-dev.jsonl
if [[ -z "${SKIP_AGENT:-}" ]]; then
  # The 1.5B model takes about 2 minutes a rollout here (10 steps of ~8 s, then a re-check), so most
  # rollouts come from the 0.5B model (~1 minute).
  rbdspy data build "${TWX[@]}" "${SMALL[@]}" --agent-lm local --split train --n 5 --seed 0 --out $D/twx-agent-local-train.jsonl
  rbdspy data build "${TWX[@]}" "${SMALL[@]}" --agent-lm local-fast --split train --n 38 --seed 2 --out $D/twx-agent-local-fast-train.jsonl
  rbdspy data build "${TWX[@]}" "${SMALL[@]}" --agent-lm local-fast --split dev --n 20 --seed 3 --out $D/twx-agent-local-fast-dev.jsonl
fi
# A user's ReAct on MiniWoB++ train seeds: the web stream's build tasks as its arms played them.
rbdspy data from-bench docs/bench/web-stream-local --phase build --out $D/web-react-train.jsonl
rbdspy data stats $D/*.jsonl
