#!/usr/bin/env python3
"""Side-by-side MRZ reading benchmark: OpenIDV (`idvd bench document`) against PassportEye.

PassportEye (PyPI `PassportEye`, MIT) is the open tool a user would otherwise pick; it finds the
MRZ with morphology and reads it with the `tesseract` binary. Both tools read the same files in the
same run, one process each, one image at a time:

  * the real specimens listed in ground_truth.tsv (../shared/testdata/mrz-images), and
  * a generated corpus written by `idvd specimen --augment --format mixed --count N --out DIR`
    (one .json ground truth per image).

Two success measures per image:
  lines exact   the MRZ lines equal the truth character for character
                (OpenIDV: after its check-digit correction; PassportEye: its `raw_text`)
  fields exact  document number, issuing state, nationality, birth date, sex, expiry date,
                surname and given names all equal the truth (PassportEye: its parsed fields)

Setup (Debian 12):  apt-get install tesseract-ocr && pip install PassportEye==2.2.2
Usage:  bench/passporteye_compare.py --idvd .build/release/idvd [--corpus DIR] [--limit N]
"""
import argparse, json, os, statistics, subprocess, sys, tempfile, time, warnings

warnings.filterwarnings("ignore")


def key_fields(lines):
    """The data fields from MRZ lines by ICAO 9303 positions (TD1 3x30, TD2/MRV-B 2x36, TD3/MRV-A 2x44)."""
    if not lines:
        return None
    clean = lambda s: " ".join(s.replace("<", " ").split())
    def names(s):
        parts = s.split("<<", 1)
        return clean(parts[0]), clean(parts[1]) if len(parts) > 1 else ""
    try:
        if len(lines) == 3 and all(len(l) == 30 for l in lines):
            l1, l2, l3 = lines
            sn, gn = names(l3)
            return dict(number=l1[5:14].replace("<", ""), country=l1[2:5].replace("<", ""), nationality=l2[15:18].replace("<", ""),
                        dob=l2[0:6], sex=l2[7], expiry=l2[8:14], surname=sn, names=gn)
        if len(lines) == 2 and len(lines[0]) == len(lines[1]) and len(lines[0]) in (36, 44):
            l1, l2 = lines
            sn, gn = names(l1[5:])
            return dict(number=l2[0:9].replace("<", ""), country=l1[2:5].replace("<", ""), nationality=l2[10:13].replace("<", ""),
                        dob=l2[13:19], sex=l2[20], expiry=l2[21:27], surname=sn, names=gn)
    except Exception:
        return None
    return None


def passporteye_fields(d):
    clean = lambda s: " ".join((s or "").replace("<", " ").split())
    return dict(number=(d.get("number") or "").replace("<", ""), country=(d.get("country") or "").replace("<", ""),
                nationality=(d.get("nationality") or "").replace("<", ""), dob=d.get("date_of_birth") or "",
                sex=d.get("sex") or "", expiry=d.get("expiration_date") or "",
                surname=clean(d.get("surname")), names=clean(d.get("names")))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    here = os.path.dirname(os.path.abspath(__file__))
    ap.add_argument("--idvd", default=os.path.join(here, "..", ".build", "release", "idvd"))
    ap.add_argument("--truth", default=os.path.join(here, "..", "..", "shared", "testdata", "mrz-images", "ground_truth.tsv"))
    ap.add_argument("--corpus", help="directory written by idvd specimen --augment")
    ap.add_argument("--limit", type=int, default=100, help="generated images read by both tools (default 100)")
    args = ap.parse_args()

    try:
        from passporteye import read_mrz
    except ImportError:
        sys.exit("PassportEye is not installed: pip install PassportEye==2.2.2 (and apt-get install tesseract-ocr)")

    # 1. OpenIDV on exactly these images (its own per-image timing, one thread).
    out = tempfile.NamedTemporaryFile(suffix=".jsonl", delete=False).name
    cmd = [args.idvd, "bench", "document", "--truth", args.truth, "--jsonl", out]
    if args.corpus:
        cmd += ["--corpus", args.corpus, "--limit", str(args.limit)]
    print("$", " ".join(cmd), flush=True)
    subprocess.run(cmd, check=True)
    rows = [json.loads(l) for l in open(out)]

    # 2. PassportEye on the same files.
    results = {"OpenIDV": [], "PassportEye": []}
    for i, r in enumerate(rows):
        truth = key_fields(r["expected"])
        results["OpenIDV"].append((r["set"], r["exact"], key_fields(r["got"]) == truth and truth is not None, r["ms"]))
        t0 = time.perf_counter()
        try:
            mrz = read_mrz(r["file"])
        except Exception:
            mrz = None
        ms = (time.perf_counter() - t0) * 1000
        lines = mrz.aux.get("raw_text", "").split("\n") if mrz is not None else []
        fields = passporteye_fields(mrz.to_dict()) if mrz is not None else None
        results["PassportEye"].append((r["set"], lines == r["expected"], fields == truth and truth is not None, ms))
        if (i + 1) % 10 == 0:
            print(f"  PassportEye {i + 1}/{len(rows)}", file=sys.stderr, flush=True)

    print(f"\n{'tool':12} {'set':10} {'n':>4} {'lines exact':>12} {'fields exact':>13} {'mean ms':>9} {'median ms':>10}")
    for tool, res in results.items():
        for s in ("specimens", "generated"):
            sub = [x for x in res if x[0] == s]
            if not sub:
                continue
            n = len(sub)
            le = sum(x[1] for x in sub); fe = sum(x[2] for x in sub)
            ms = [x[3] for x in sub]
            print(f"{tool:12} {s:10} {n:4d} {le:5d} ({100*le/n:4.1f}%) {fe:5d} ({100*fe/n:4.1f}%) {statistics.mean(ms):9.0f} {statistics.median(ms):10.0f}")


if __name__ == "__main__":
    main()
