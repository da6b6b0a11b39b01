#!/usr/bin/env python3
"""Texture-PAD study on a dump of `idvd bench liveness --study --dump FILE` (dev split only).

Compares, per species, how the per-frame MiniFASNet scores separate bona fide windows from attacks
for three crops (dlib's tracked box as the analyser used so far; the models' own detector run on the
whole frame; the same detector run on the region around the tracked face) and several robust
aggregates over the frames of good quality. Prints AUCs and the bona fide / attack ranges.

usage: python3 bench/pad_study.py DUMP.jsonl [--split dev]
"""
import json
import math
import sys
from collections import defaultdict

path = sys.argv[1]
split = sys.argv[sys.argv.index("--split") + 1] if "--split" in sys.argv else "dev"
rows = [json.loads(l) for l in open(path) if l.strip()]
rows = [r for r in rows if r["split"] == split and r["frames"] >= 10]


def logit(p):
    p = min(max(p, 1e-6), 1 - 1e-6)
    return math.log(p / (1 - p))


def pct(v, q):
    v = sorted(v)
    if not v:
        return None
    k = max(0, min(len(v) - 1, int(math.ceil(q * len(v))) - 1))
    return v[k]


def auc(pos, neg):
    """P(bona fide score > attack score), ties half."""
    if not pos or not neg:
        return float("nan")
    n = 0.0
    for p in pos:
        for q in neg:
            n += 1 if p > q else 0.5 if p == q else 0
    return n / (len(pos) * len(neg))


def frame_scores(r, crop, combine="mean", good=None):
    """Per-frame bona fide scores (0..1) of the crop, for frames passing `good`."""
    pf = {f["i"]: f for f in r["per_frame"]}
    out = []
    for s in r.get("study") or []:
        v = s.get(crop)
        if not v:
            continue
        f = pf.get(s["i"], {})
        if good and not good(f, r):
            continue
        if combine == "mean":
            out.append(sum(v) / len(v))
        elif combine == "logit":
            out.append(sum(logit(x) for x in v) / len(v))
        elif combine == "v2":
            out.append(v[0])
        elif combine == "v1se":
            out.append(v[1])
    return out


def sharp_ok(f, r):
    sharp = [x["sharp"] for x in r["per_frame"] if x.get("sharp")]
    if not sharp or f.get("sharp") is None:
        return False
    pose = f.get("pose") or [90, 90, 90]
    return f["sharp"] >= 0.5 * max(sharp) and abs(pose[0]) <= 30 and abs(pose[1]) <= 25


aggs = {
    "p10": lambda v: pct(v, 0.1),
    "p25": lambda v: pct(v, 0.25),
    "median": lambda v: pct(v, 0.5),
    "mean": lambda v: sum(v) / len(v),
    "min": lambda v: min(v),
    "trim20": lambda v: sum(sorted(v)[len(v) // 5: len(v) - len(v) // 5] or v) / len(sorted(v)[len(v) // 5: len(v) - len(v) // 5] or v),
}

species = sorted({r["species"] for r in rows})
bona = [r for r in rows if r["species"] == "bona fide"]
print(f"{split}: {len(bona)} bona fide windows of {len({r['person'] for r in bona})} people; attacks:",
      {s: sum(1 for r in rows if r['species'] == s) for s in species if s != 'bona fide'})

for crop in ["dlib", "full", "roi"]:
    for combine in ["mean", "logit", "v2", "v1se"]:
        for gname, good in [("all", None), ("good", sharp_ok)]:
            line = f"{crop:5} {combine:5} {gname:5}"
            for an, af in aggs.items():
                def agg(r):
                    v = frame_scores(r, crop, combine, good)
                    return af(v) if v else None
                pos = [agg(r) for r in bona]
                pos = [x for x in pos if x is not None]
                parts = []
                for s in species:
                    if s == "bona fide":
                        continue
                    neg = [agg(r) for r in rows if r["species"] == s]
                    neg = [x for x in neg if x is not None]
                    parts.append(f"{auc(pos, neg):.3f}")
                line += f" | {an}: " + " ".join(parts)
            print(line)

# Detector coverage: how often the models' own detector found the tracked face.
for crop in ["full", "roi"]:
    found = total = 0
    for r in rows:
        for s in r.get("study") or []:
            total += 1
            found += 1 if s.get(crop) else 0
    print(f"detector {crop}: matched the tracked face on {found}/{total} frames")
print("species order:", [s for s in species if s != "bona fide"])
