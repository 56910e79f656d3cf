#!/usr/bin/env bash
# The last device call of the GPU kit (docs/gpu.md): join the wheels split by bytes, verify every
# wheel against the SHA256SUMS the parts carried, and install the whole set with no index and no
# dependency resolution into $SITE (then PYTHONPATH=$SITE:src).
set -euo pipefail
KIT=${KIT:-/tmp/kit}
SITE=${SITE:-/tmp/site}
PY=${PYTHON:-python3}
cd "$KIT"
shopt -s nullglob
for first in *.whl.001; do
  wheel=${first%.001}
  cat "$wheel".[0-9][0-9][0-9] > "$wheel"
  rm "$wheel".[0-9][0-9][0-9]
done
sums=(SHA256SUMS.part*)
[ ${#sums[@]} -gt 0 ] || { echo "install: no SHA256SUMS in $KIT: were the parts received?" >&2; exit 2; }
# Every wheel named in any part's sums must be here, whole.
sort -u "${sums[@]}" > SHA256SUMS
sha256sum --check --quiet --strict SHA256SUMS
wheels=(*.whl)
[ ${#wheels[@]} -eq "$(wc -l < SHA256SUMS)" ] || { echo "install: wheels and sums disagree" >&2; exit 2; }
"$PY" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
  --target "$SITE" "${wheels[@]}"
echo "install: ${#wheels[@]} wheels verified and installed into $SITE"
