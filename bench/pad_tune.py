#!/usr/bin/env python3
"""Tuning of the PAD texture cue and decision on the DEV split of `idvd bench liveness --study` dumps.

Re-computes the texture cue the analyser uses (texture_cue below: MiniFASNet on the crops of its own
detector's box, per-frame log-odds = mean of the two models' logits, median over the good frames of
10 evenly spread ones), fits its calibration (logistic regression, bona fide against every screen and
replay species — not digital prints, which texture cannot see — classes weighted equally), and
simulates the server policy (IDVEngine PADJudgement.swift) on dev for a grid of levels. Never run it
on eval rows: the script refuses them.

usage: python3 bench/pad_tune.py DEV_DUMP.jsonl
"""
import json
import math
import sys

rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
if any(r["split"] != "dev" for r in rows):
    sys.exit("pad_tune.py tunes on dev only: the dump holds eval rows (use --only dev)")
rows = [r for r in rows if r["frames"] >= 10]

FRAMES = 10


def logit(p):
    p = min(max(p, 1e-6), 1 - 1e-6)
    return math.log(p / (1 - p))


def spread(n, k):
    if k >= n:
        return set(range(n))
    step = (n - 1) / (k - 1)
    return {min(n - 1, int(round(i * step))) for i in range(k)}


def median(v):
    v = sorted(v)
    n = len(v)
    return v[n // 2] if n % 2 else 0.5 * (v[n // 2 - 1] + v[n // 2])


def texture_cue(r, crop="roi"):
    """(raw median log-odds, good frames, scored frames)."""
    pf = {f["i"]: f for f in r["per_frame"]}
    pick = spread(r["frames"], FRAMES)
    sharp = [f["sharp"] for f in r["per_frame"] if f.get("sharp")]
    top = max(sharp) if sharp else 0
    scored, good = 0, []
    for s in r.get("study") or []:
        if s["i"] not in pick or not s.get(crop):
            continue
        scored += 1
        f = pf[s["i"]]
        pose = f.get("pose") or [90, 90, 90]
        if abs(pose[0]) > 30 or abs(pose[1]) > 25 or (f.get("sharp") or 0) < 0.3 * top:
            continue
        good.append(sum(logit(x) for x in s[crop]) / len(s[crop]))
    return (median(good) if good else None), len(good), scored


SCREENS = {"replay, real footage", "replay, simulated phone screen", "replay, simulated laptop screen",
           "replay, simulated screen filling the view"}


def sigmoid(z):
    return 1 / (1 + math.exp(-z)) if z >= 0 else math.exp(z) / (1 + math.exp(z))


def fit(xs, ys):
    """Weighted logistic regression y ~ sigmoid(a x + b), classes weighted equally: the maximum of
    the weighted log-likelihood on a grid (a in 0.02…5 by 0.01, b in −10…10 by 0.01), robust where
    the classes are nearly separable."""
    n1 = sum(ys)
    n0 = len(ys) - n1
    w = [0.5 / n1 if y else 0.5 / n0 for y in ys]

    def ll(a, b):
        t = 0.0
        for x, y, wi in zip(xs, ys, w):
            z = a * x + b
            # log sigmoid(z) and log(1 - sigmoid(z)), stable
            ls = -math.log1p(math.exp(-z)) if z >= 0 else z - math.log1p(math.exp(z))
            l1s = ls - z
            t += wi * (ls if y else l1s)
        return t

    best = None
    for ia in range(2, 501, 2):
        a = ia / 100
        for ib in range(-1000, 1001, 10):
            v = ll(a, ib / 100)
            if best is None or v > best[0]:
                best = (v, a, ib / 100)
    _, a0, b0 = best
    for ia in range(-10, 11):
        for ib in range(-10, 11):
            a, b = a0 + ia / 1000, b0 + ib / 1000
            v = ll(a, b)
            if v > best[0]:
                best = (v, a, b)
    return best[1], best[2]


xs, ys = [], []
for r in rows:
    if r["species"] == "bona fide" or r["species"] in SCREENS:
        t, _, _ = texture_cue(r)
        if t is not None:
            xs.append(t)
            ys.append(1 if r["species"] == "bona fide" else 0)
a, b = fit(xs, ys)
print(f"calibration (dev, {sum(ys)} bona fide vs {len(ys) - sum(ys)} screens/replays): log-odds = {a:.4f} * raw + {b:.4f}")


# The policy (IDVEngine PADJudgement.swift), replicated for the grid.
NOT_KEPT = {"FACE_LOST", "MULTIPLE_FACES", "IDENTITY_CHANGED", "NO_FACE"}


def evidence(r):
    raw, good, scored = texture_cue(r)
    inp = r.get("inputs") or {}
    measurable = r["tracked"] >= 2
    return {
        "t": None if raw is None else a * raw + b, "good": good, "scored": scored,
        "motion": inp.get("motion") if measurable else None, "action": inp.get("facial_action") or 0.0,
        "cues": set(r["reasons"]), "frames": r["frames"],
    }


SUBST = None  # texture log-odds from which strong action stands in for motion (None: never)


def shows_life(e, t, S):
    if e["action"] < 0.5:
        return False
    return (e["motion"] or 0) >= 0.5 or (SUBST is not None and t is not None and t >= SUBST and e["action"] >= S)


def findings(e, L, M, G, S):
    attack, unsure = [], []
    if "INSUFFICIENT_FRAMES" in e["cues"]:
        attack.append("insufficient_frames")
    if e["t"] is not None and e["good"] >= G:
        if e["t"] < L - M:
            attack.append("texture_attack")
        elif e["t"] < L:
            unsure.append("texture_uncertain")
    else:
        unsure.append("few_good_frames")
    if e["cues"] & NOT_KEPT:
        unsure.append("face_not_kept")
    strong = e["t"] is not None and e["good"] >= G and e["t"] >= L + M
    if e["motion"] is not None and e["action"] < 0.5 and e["motion"] < 0.5:
        # Texture and motion disagree when the texture is strongly bona fide: unsure, not an attack.
        (unsure if strong else attack).append("cues_disagree" if strong else "no_sign_of_life")
    elif e["motion"] is not None and not shows_life(e, e["t"] if e["good"] >= G else None, S):
        unsure.append("cues_disagree")
    return attack, unsure


def judge(e, L, M, G, S, earlier=None, final=False):
    attack, unsure = findings(e, L, M, G, S)
    if earlier is None and not final:
        return ("attack" if attack else "unsure" if unsure else "bona_fide"), attack + unsure
    f = list(attack)
    caps = [c for c in (earlier, e) if c is not None]
    tex = [c for c in caps if c["t"] is not None]
    good = sum(c["good"] for c in tex)
    pooled = sum(c["t"] * max(1, c["good"]) for c in tex) / sum(max(1, c["good"]) for c in tex) if tex else None
    if pooled is not None and pooled < L and "texture_attack" not in f:
        f.append("texture_attack")
    if not tex or good < G:
        f.append("few_good_frames")
    life = any(not (c["cues"] & NOT_KEPT) and shows_life(c, pooled if good >= G else None, S) for c in caps)
    if not life and "no_sign_of_life" not in f:
        f.append("face_not_kept" if all(c["cues"] & NOT_KEPT for c in caps) else "cues_disagree")
    return ("attack" if f else "bona_fide"), f


ev = [(r, evidence(r)) for r in rows]
groups = {}
for i, (r, _) in enumerate(ev):
    groups.setdefault((r["species"], r["clip"]), []).append(i)


def simulate(L, M, G, S):
    out = []
    for i, (r, e) in enumerate(ev):
        first, f1 = judge(e, L, M, G, S)
        if first != "unsure":
            out.append((r, first, first, False, f1))
            continue
        g = groups[(r["species"], r["clip"])]
        if len(g) > 1:
            k = g.index(i)
            nxt = ev[g[(k + 1) % len(g)]][1]
            final, f2 = judge(nxt, L, M, G, S, earlier=e)
        else:
            final, f2 = judge(e, L, M, G, S, final=True)
        out.append((r, first, final, True, f1 + ["→"] + f2))
    return out


def rates(out):
    bona = [o for o in out if o[0]["species"] == "bona fide"]
    res = {"BPCER": sum(o[2] != "bona_fide" for o in bona) / len(bona), "retake": sum(o[3] for o in bona) / len(bona)}
    for s in sorted({o[0]["species"] for o in out} - {"bona fide"}):
        a_ = [o for o in out if o[0]["species"] == s]
        res[s] = sum(o[2] == "bona_fide" for o in a_) / len(a_)
    return res


if __name__ == "__main__":
    print("grid (dev): L line, M unsure margin, G min good frames, S strong action")
    for SUBST in [None]:
      for L in [-2.25, -2.0, -1.75, -1.5, -1.25]:
        for M in [1.0, 2.0, 3.0]:
            for G in [4]:
                for S in [0.6]:
                    r_ = rates(simulate(L, M, G, S))
                    print(f"T={SUBST} L={L:5} M={M:3} G={G} S={S}: BPCER {100*r_['BPCER']:5.1f} % retake {100*r_['retake']:5.1f} % | APCER "
                          + " ".join(f"{k.split(',')[1].strip()[:18]}={100*v:4.1f}" for k, v in r_.items() if k not in ("BPCER", "retake")))
