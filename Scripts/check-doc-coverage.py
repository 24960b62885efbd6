#!/usr/bin/env python3
"""Fails when a public symbol of the package has no documentation comment of its own, or an incomplete one.

Usage: check-doc-coverage.py <symbol-graph-dir> <package-root> <module>...

Reads the symbol graphs that `swift build -Xswiftc -emit-symbol-graph -Xswiftc -emit-symbol-graph-dir …` wrote
(`<module>.symbols.json`, and `<module>@<Other>.symbols.json` for its extensions to other modules' types) and
prints one `file:line: error: …` line per problem, then a summary; the exit status is 1 when there is any.

Which symbols are checked — every symbol in the graphs with access level `public` or `open` that
  1. is declared in a file under <package-root> (its `location`). This leaves out the symbols of modules the
     module re-exports (a module with `@_exported import Foundation` has Foundation and Glibc in its graph)
     and anything else declared outside the package;
  2. is not a synthesized member, i.e. its identifier has no `::SYNTHESIZED::`. Those are a protocol extension's
     default implementations copied onto each conforming type: `!=` from `Equatable`, `localizedDescription`
     from `Error`, `assumeIsolated` on actors, and our own defaults such as `NetworkAgentPlugin.onRequest` on
     every plugin. They are documented, or not, where they are written: ours are checked there, the standard
     library's and Foundation's are not ours to document;
  3. has a name that does not start with `_` (not public API by the package's convention);
  4. is not an extension block (`swift.extension`, emitted with `-emit-extension-block-symbols` for each
     `extension OtherModuleType`): the block is not a declaration, its members are checked one by one.
Symbols without a location are what the compiler generates for a conformance (`init(rawValue:)` of a raw-value
enum, `Codable`'s `init(from:)`, `Hashable`'s `hashValue`): nobody wrote them, so nobody can document them;
they are skipped by rule 1.

What is required of a checked symbol:
  - a doc comment of its own: present, not blank, and written at the symbol (a comment the compiler inherited
    from a protocol requirement elsewhere does not count);
  - for functions, methods, initializers, subscripts and operators: every named parameter documented
    (`- Parameter name:` or `- name:` under `- Parameters:`), a `- Returns:` unless it returns nothing (`Void`,
    `()`, `Never`), and a `- Throws:` when it throws or rethrows. An initializer returns nothing here.
"""

import json
import os
import re
import sys
from pathlib import Path

SYNTHESIZED = "::SYNTHESIZED::"
CALLABLE_KINDS = {
    "swift.func",
    "swift.func.op",
    "swift.method",
    "swift.type.method",
    "swift.init",
    "swift.subscript",
    "swift.type.subscript",
}
INITIALIZER_KINDS = {"swift.init"}
NO_RESULT = {"", "()", "Void", "Never"}


def doc_text(symbol: dict) -> str:
    """The symbol's doc comment as one string; empty when it has none."""
    comment = symbol.get("docComment")
    return "\n".join(line.get("text", "") for line in comment.get("lines", [])) if comment else ""


def problems_of(symbol: dict, module: str) -> list:
    """What is missing from the documentation of one checked symbol."""
    comment = symbol.get("docComment")
    text = doc_text(symbol)
    own = comment is not None and comment.get("uri") == symbol["location"]["uri"]
    if not own or not text.strip():
        return ["no doc comment"]
    kind = symbol["kind"]["identifier"]
    if kind not in CALLABLE_KINDS:
        return []
    problems = []
    signature = symbol.get("functionSignature", {})
    for parameter in signature.get("parameters", []):
        name = parameter.get("internalName", parameter.get("name", "_"))
        if name == "_":
            continue
        pattern = r"^\s*-\s+(Parameter\s+)?%s\s*:" % re.escape(name)
        if not re.search(pattern, text, re.MULTILINE | re.IGNORECASE):
            problems.append(f"parameter `{name}` not documented")
    result = "".join(fragment["spelling"] for fragment in signature.get("returns", [])).strip()
    if kind not in INITIALIZER_KINDS and result not in NO_RESULT:
        if not re.search(r"^\s*-\s+Returns\s*:", text, re.MULTILINE | re.IGNORECASE):
            problems.append(f"no `- Returns:` (returns {result})")
    declaration = "".join(fragment["spelling"] for fragment in symbol.get("declarationFragments", []))
    if re.search(r"\b(throws|rethrows)\b", declaration):
        if not re.search(r"^\s*-\s+Throws\s*:", text, re.MULTILINE | re.IGNORECASE):
            problems.append("no `- Throws:`")
    return problems


def main(argv: list) -> int:
    if len(argv) < 4:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    source, root, modules = Path(argv[1]), os.path.realpath(argv[2]), argv[3:]
    prefix = "file://" + root + "/"
    failures = 0
    checked = 0
    skipped = {"other modules or no location": 0, "synthesized": 0, "underscored": 0, "extension blocks": 0}
    for module in modules:
        files = [source / f"{module}.symbols.json"] + sorted(source.glob(f"{module}@*.symbols.json"))
        if not files[0].exists():
            print(f"error: no symbol graph for {module} in {source}", file=sys.stderr)
            return 1
        for path in files:
            for symbol in json.loads(path.read_text()).get("symbols", []):
                if symbol.get("accessLevel") not in ("public", "open"):
                    continue
                if not symbol.get("location", {}).get("uri", "").startswith(prefix):
                    skipped["other modules or no location"] += 1
                    continue
                if SYNTHESIZED in symbol["identifier"]["precise"]:
                    skipped["synthesized"] += 1
                    continue
                if any(component.startswith("_") for component in symbol.get("pathComponents", [])):
                    skipped["underscored"] += 1
                    continue
                if symbol["kind"]["identifier"] == "swift.extension":
                    skipped["extension blocks"] += 1
                    continue
                checked += 1
                problems = problems_of(symbol, module)
                if not problems:
                    continue
                failures += 1
                file = symbol["location"]["uri"][len("file://") :]
                line = symbol["location"].get("position", {}).get("line", 0) + 1
                name = ".".join(symbol.get("pathComponents", []))
                print(f"{os.path.relpath(file)}:{line}: error: {module}.{name}: {'; '.join(problems)}")
    summary = ", ".join(f"{count} {reason}" for reason, count in skipped.items())
    print(f"doc coverage: {checked} public symbols checked, {failures} with problems (skipped: {summary})")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
