#!/usr/bin/env bash
# Device call k of the GPU kit (docs/gpu.md): move the carried .gpu/partK into the kit folder,
# which outlives the call while the machine stays warm (30 s). Usage: bash gpu/receive.sh K
set -euo pipefail
k=${1:?usage: receive.sh PART_NUMBER}
KIT=${KIT:-/tmp/kit}
src=.gpu/part$k
[ -d "$src" ] || { echo "receive: $src was not carried (carry it with the call)" >&2; exit 2; }
mkdir -p "$KIT"
mv "$src"/* "$KIT"/
echo "receive: part$k -> $KIT: $(ls "$KIT" | wc -l) files, $(du -sm "$KIT" | cut -f1) MiB in all"
