#!/usr/bin/env python3
"""Field audit of `idvd document read` on a rendered corpus (#40: no VALID report with a wrong field).

usage: bench/document-field-audit.py IDVD CORPUS_DIR|TRUTH.tsv [--expect print|mrz] [-- EXTRA idvd document read ARGS]

CORPUS_DIR holds `idvd specimen --out DIR` pages and their .json truth; TRUTH.tsv is a ground-truth
table as ../shared/testdata/mrz-images/ground_truth.tsv (file, format, MRZ lines separated by |). Each page is read by a fresh
`IDVD document read PAGE --jsonl --no-portrait [EXTRA]` (the server's document policy, the default
settings unless EXTRA gives --config/--set) and compared with the truth:
  --expect mrz (default): a report is right when its MRZ (as corrected) is the truth's MRZ and its
    names are the MRZ's names; any other report that is VALID carries a wrong field.
  --expect print: the page prints one thing and encodes another in its MRZ (`--mrz-surname`,
    `--document-code`): every report is wrong by construction, and none may be VALID.
Prints one line per report that is not right (file, status, the fields that differ) and the counts
by status. Exit 0.
"""
import json, os, subprocess, sys

def names_from_mrz(lines):
    zone = lines[2] if len(lines) == 3 else lines[0][5:]
    sur, _, given = zone.partition("<<")
    clean = lambda s: " ".join(p for p in s.split("<") if p)
    return clean(sur), clean(given)

def main():
    args = sys.argv[1:]
    extra = []
    if "--" in args:
        i = args.index("--"); extra = args[i + 1:]; args = args[:i]
    expect = "mrz"
    if "--expect" in args:
        i = args.index("--expect"); expect = args[i + 1]; del args[i:i + 2]
    idvd, corpus = args
    counts, wrong_valid, right, right_status = {}, 0, 0, {}
    if corpus.endswith(".tsv"):
        base = os.path.dirname(corpus)
        truths = [{"file": c[0], "mrz_lines": c[2].split("|")} for c in (l.rstrip("\n").split("\t") for l in open(corpus))
                  if not c[0].startswith("#") and len(c) >= 3]
    else:
        base = corpus
        truths = [json.load(open(os.path.join(corpus, n))) for n in sorted(os.listdir(corpus)) if n.endswith(".json")]
    names_check = {}
    for truth in truths:
        page = os.path.join(base, truth["file"])
        out = subprocess.run([idvd, "document", "read", page, "--jsonl", "--no-portrait"] + extra, capture_output=True, text=True)
        try:
            rep = json.loads(out.stdout.strip().splitlines()[-1])
            rep = rep.get("report", rep)
        except Exception:
            print(f"{truth['file']}: no report (exit {out.returncode}) {out.stderr.strip()[:200]}"); counts["NO REPORT"] = counts.get("NO REPORT", 0) + 1
            continue
        status = rep["overall_status"]
        nc = [c["result"] for c in rep["checks_performed"] if c["name"] == "Names match visual zone"]
        names_check[nc[0] if nc else "absent"] = names_check.get(nc[0] if nc else "absent", 0) + 1
        counts[status] = counts.get(status, 0) + 1
        lines = rep["mrz"]["lines_corrected"]
        diffs = []
        if lines != truth["mrz_lines"]: diffs.append(f"mrz {lines} != {truth['mrz_lines']}")
        f = rep["fields"]
        s, g = names_from_mrz(truth["mrz_lines"]) if len(truth["mrz_lines"]) in (2, 3) else (f.get("surname", ""), f.get("given_names", ""))
        if f.get("surname", "") != s: diffs.append(f"surname {f.get('surname')!r} != {s!r}")
        if f.get("given_names", f.get("givenNames", "")) != g: diffs.append(f"given names {f.get('given_names', f.get('givenNames'))!r} != {g!r}")
        if expect == "print" or diffs:
            if status == "VALID": wrong_valid += 1
            print(f"{truth['file']}: {status}; {'; '.join(diffs) or 'MRZ encodes other than the print'}; warnings: {rep['warnings'][:3]} errors: {rep['errors'][:2]}")
        else:
            right += 1
            right_status[status] = right_status.get(status, 0) + 1
            if status != "VALID": print(f"{truth['file']}: {status} (right): warnings: {rep['warnings'][:3]} errors: {rep['errors'][:2]}")
    total = sum(counts.values())
    fmt = lambda d: ", ".join(f"{k} {v}" for k, v in sorted(d.items()))
    print(f"{corpus}: {total} reports ({fmt(counts)}); {right} right ({fmt(right_status)}); {total - right} wrong; VALID with a wrong field: {wrong_valid}; names check: {fmt(names_check)}")

main()
