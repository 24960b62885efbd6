#!/usr/bin/env python3
"""Copies one module's symbol graphs into a folder of their own, keeping only the package's symbols.

Usage: prepare-symbol-graphs.py <symbol-graph-dir> <module> <output-dir> <package-root>

`swift build -Xswiftc -emit-symbol-graph` writes every module's graphs into one folder, and `docc convert
--additional-symbol-graph-dir` reads a whole folder, so each module gets its own: `<module>.symbols.json` and the
`<module>@<Other>.symbols.json` files that hold its extensions to other modules' types.

The graphs of a module that re-exports another (`@_exported import Foundation`, as `NetworkAgent` had until issue
18) also hold every symbol of the re-exported modules — all of Foundation and Glibc, some 19,000 symbols and a
300 MB archive.
A symbol is kept when
  1. it is declared in a file under <package-root> (its `location`), or
  2. it is a member the compiler synthesized onto a kept symbol (a protocol extension's default implementation,
     whose identifier is `<original>::SYNTHESIZED::<kept type>`), or
  3. it is a member of a kept symbol (`memberOf`) without a location of its own: what the compiler generates
     for a conformance, such as `init(rawValue:)` or `init(from:)`.
A relationship is kept when its source is kept; its target may be another module's symbol (`Sendable`), which
docc shows from the relationship's `targetFallback`. A file left with no symbol is not written.
"""

import json
import os
import sys
from pathlib import Path

SYNTHESIZED = "::SYNTHESIZED::"


def declared_in(symbol: dict, root: str) -> bool:
    """Whether the symbol's declaration is in a file under the package root."""
    uri = symbol.get("location", {}).get("uri", "")
    return uri.startswith("file://" + root + "/")


def kept_identifiers(graph: dict, root: str) -> set:
    """The precise identifiers of the symbols of `graph` that belong to the package (rules 1 to 3)."""
    symbols = graph.get("symbols", [])
    kept = {s["identifier"]["precise"] for s in symbols if declared_in(s, root)}
    parents = {}
    for relation in graph.get("relationships", []):
        if relation.get("kind") == "memberOf":
            parents.setdefault(relation["source"], set()).add(relation["target"])
    changed = True
    while changed:
        changed = False
        for symbol in symbols:
            precise = symbol["identifier"]["precise"]
            if precise in kept:
                continue
            synthesized_onto = precise.split(SYNTHESIZED, 1)[1] if SYNTHESIZED in precise else None
            generated_member = "location" not in symbol and parents.get(precise, set()) & kept
            if (synthesized_onto and synthesized_onto in kept) or generated_member:
                kept.add(precise)
                changed = True
    return kept


def main(argv: list) -> int:
    if len(argv) != 5:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    source, module, output, root = Path(argv[1]), argv[2], Path(argv[3]), os.path.realpath(argv[4])
    output.mkdir(parents=True, exist_ok=True)
    for old in output.glob("*.symbols.json"):
        old.unlink()
    files = [source / f"{module}.symbols.json"] + sorted(source.glob(f"{module}@*.symbols.json"))
    if not files[0].exists():
        print(f"error: no symbol graph for {module} in {source}", file=sys.stderr)
        return 1
    for path in files:
        graph = json.loads(path.read_text())
        kept = kept_identifiers(graph, root)
        if not kept:
            continue
        graph["symbols"] = [s for s in graph["symbols"] if s["identifier"]["precise"] in kept]
        graph["relationships"] = [r for r in graph.get("relationships", []) if r["source"] in kept]
        (output / path.name).write_text(json.dumps(graph))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
