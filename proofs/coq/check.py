#!/usr/bin/env python3
"""Compile proofs/coq/ and check that nothing unproved hides in it.

1. Refuses sources that contain ``Admitted``, ``admit``, ``Axiom``,
   ``Parameter``, ``Conjecture``, ``give_up`` or a switch that turns off a
   kernel check (guard, positivity, universes) outside comments.
2. Compiles every file of ``_CoqProject`` in order with ``coqc``.
3. Runs ``Print Assumptions`` on every ``Theorem``/``Lemma``/``Corollary``/
   ``Proposition``/``Fact``/``Remark`` and fails if any axiom outside
   ``allowed_axioms.txt`` appears.

Usage: ``python3 proofs/coq/check.py`` (or ``make -C proofs/coq``). Exit 0 on
success; the last line says how many theorems were checked.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
FORBIDDEN = re.compile(
    r"\b(Admitted|admit|Axiom|Axioms|Parameter|Parameters|Conjecture|give_up|bypass_check"
    r"|Guard\s+Checking|Positivity\s+Checking|Universe\s+Checking)\b"
)
STATEMENT = re.compile(r"^\s*(?:Theorem|Lemma|Corollary|Proposition|Fact|Remark|Property|Example)\s+([A-Za-z_][A-Za-z0-9_']*)", re.M)


def strip_comments(text: str) -> str:
    """Remove (possibly nested) Coq comments ``(* ... *)``."""
    out, depth, i = [], 0, 0
    while i < len(text):
        if text.startswith("(*", i):
            depth += 1
            i += 2
        elif text.startswith("*)", i) and depth:
            depth -= 1
            i += 2
        else:
            if depth == 0:
                out.append(text[i])
            i += 1
    return "".join(out)


def project() -> tuple[list[str], list[Path]]:
    flags, files = [], []
    for line in (HERE / "_CoqProject").read_text().splitlines():
        line = line.split("#")[0].strip()
        if not line:
            continue
        if line.endswith(".v"):
            files.append(HERE / line)
        else:
            flags.extend(line.split())
    return flags, files


def allowed() -> set[str]:
    names = set()
    for line in (HERE / "allowed_axioms.txt").read_text().splitlines():
        line = line.split("#")[0].strip()
        if line:
            names.add(line)
    return names


def parse_assumptions(output: str) -> dict[str, set[str]]:
    """Map each checked theorem (by marker) to the axiom names it uses."""
    result: dict[str, set[str]] = {}
    current = None
    in_axioms = False
    for line in output.splitlines():
        m = re.match(r"^@@CHECK (\S+)$", line)
        if m:
            current = m.group(1)
            result[current] = set()
            in_axioms = False
            continue
        if current is None:
            continue
        if line.startswith("Closed under the global context"):
            in_axioms = False
        elif line == "Axioms:":
            in_axioms = True
        elif re.match(r"^[A-Z][A-Za-z ]*:$", line):
            # any other assumption kind (unchecked guard/positivity/universes, ...) is never allowed
            in_axioms = False
            result[current].add("<" + line[:-1] + ">")
        elif in_axioms and line and not line[0].isspace():
            result[current].add(line.split(" :")[0].strip())
    return result


def print_assumptions(coqc: str, flags: list[str], logical: str, files: list[Path],
                      groups: dict[str, list[str]]) -> dict[str, set[str]] | None:
    """Axioms used by each group of theorems (``None`` if Coq failed)."""
    with tempfile.TemporaryDirectory() as tmp:
        chk = Path(tmp) / "Assumptions.v"
        lines = [f"From {logical} Require {' '.join(f.stem for f in files)}."]
        for i, (label, names) in enumerate(groups.items()):
            tup = "".join(f"(@{n}, " for n in names) + "tt" + ")" * len(names)
            lines.append(f"Definition certbound_check_{i} := {tup}.")
            lines.append(f'Goal True. idtac "@@CHECK {label}". exact I. Qed.')
            lines.append(f"Print Assumptions certbound_check_{i}.")
        chk.write_text("\n".join(lines) + "\n")
        args = [a if a != "." else str(HERE) for a in flags]
        proc = subprocess.run([coqc, "-q", *args, str(chk)], cwd=tmp, capture_output=True, text=True)
    if proc.returncode != 0:
        print(proc.stdout + proc.stderr)
        print("FAILED: Print Assumptions")
        return None
    used = parse_assumptions(proc.stdout)
    missing = [label for label in groups if label not in used]
    if missing:
        print("no Print Assumptions output for: " + ", ".join(missing))
        return None
    return used


def main() -> int:
    flags, files = project()
    logical = flags[flags.index("-R") + 2] if "-R" in flags else "Top"
    failures = []
    theorems: list[str] = []
    for f in files:
        src = strip_comments(f.read_text())
        for m in FORBIDDEN.finditer(src):
            failures.append(f"{f.name}: forbidden keyword {m.group(1)!r}")
        theorems += [f"{logical}.{f.stem}.{name}" for name in STATEMENT.findall(src)]
    if failures:
        print("\n".join(failures))
        return 1
    coqc = shutil.which("coqc")
    if coqc is None:
        print("coqc not found: install Coq 8.16 with Flocq, Interval and Coquelicot "
              "(Debian: apt-get install coq libcoq-flocq libcoq-interval libcoq-coquelicot)")
        return 2
    t0 = time.perf_counter()
    for f in files:
        t = time.perf_counter()
        proc = subprocess.run([coqc, "-q", *flags, f.name], cwd=HERE, capture_output=True, text=True)
        if proc.returncode != 0:
            print(proc.stdout + proc.stderr)
            print(f"FAILED: coqc {f.name}")
            return 1
        print(f"coqc {f.name}: {time.perf_counter() - t:.1f} s")
    ok = allowed()
    # One Print Assumptions over a tuple of every theorem (one traversal of the
    # shared dependencies); per-theorem runs only to name the culprits.
    used = print_assumptions(coqc, flags, logical, files, {"ALL": theorems})
    if used is None:
        return 1
    if used["ALL"] - ok:
        per = print_assumptions(coqc, flags, logical, files, {n: [n] for n in theorems}) or {}
        for n, axs in sorted(per.items()):
            if axs - ok:
                print(f"NOT ALLOWED: {n} uses {', '.join(sorted(axs - ok))}")
        print(f"FAILED: axioms outside allowed_axioms.txt: {', '.join(sorted(used['ALL'] - ok))}")
        return 1
    all_used = sorted(used["ALL"])
    print(f"axioms used: {', '.join(all_used) or 'none'}")
    print(f"OK: {len(theorems)} theorems in {len(files)} files checked, "
          f"only allowed axioms ({time.perf_counter() - t0:.1f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
