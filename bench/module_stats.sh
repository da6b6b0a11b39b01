#!/usr/bin/env bash
# bench/module_stats.sh — lines and public declarations per module under Sources/ (the figures
# bench/REDESIGN.md puts side by side). Lines: all lines of the module's .swift/.c/.cpp/.h files.
# Public declarations: lines declaring something `public`/`open` (Swift; `public import` lines not
# counted), and for C targets the functions declared in their include/ headers.
set -euo pipefail
cd "$(dirname "$0")/.."
printf '%-18s %8s %8s\n' module lines public
total_l=0; total_p=0
for d in Sources/*/; do
  m=$(basename "$d")
  l=$(find "$d" -type f \( -name '*.swift' -o -name '*.c' -o -name '*.cpp' -o -name '*.h' \) -print0 | xargs -0 cat 2>/dev/null | wc -l)
  p=$(find "$d" -type f -name '*.swift' -print0 | xargs -0 grep -hE '^[[:space:]]*(@[A-Za-z_]+(\([^)]*\))?[[:space:]]+)*(public|open)[[:space:]]' 2>/dev/null \
      | grep -vE '^[[:space:]]*(public|open)[[:space:]]+import[[:space:]]' | wc -l || true)
  if [ -d "$d/include" ]; then
    c=$(grep -hE '^[a-z_ ]+[ *]+[a-z_0-9]+\(' "$d"/include/*.h 2>/dev/null | wc -l || true)
    p=$((p + c))
  fi
  printf '%-18s %8d %8d\n' "$m" "$l" "$p"
  total_l=$((total_l + l)); total_p=$((total_p + p))
done
printf '%-18s %8d %8d\n' total "$total_l" "$total_p"
