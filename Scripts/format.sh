#!/usr/bin/env bash
# Formats every Swift file in place, then lints what formatting cannot fix.
set -euo pipefail
cd "$(dirname "$0")/.."
paths=(Package.swift)
for dir in Sources Plugins Tests Examples Benchmarks Fuzz; do
    [ -d "$dir" ] && paths+=("$dir")
done
swift format format --in-place --recursive "${paths[@]}"
"$(dirname "$0")/lint"
