#!/usr/bin/env python3
"""Issue 34 (face matching): the studies behind bench/face.md's "What else was measured" section,
run on the per-image measures `idvd bench face` caches (~/.cache/openidv/bench/face-*.bin, format
`MeasureCache` in Sources/idvd/FaceRecognitionBench.swift), with its protocols and its fixed person
split (bench/lfw-split.txt). Choices are read on the fit people; eval lines are printed for the
report only.

    idvd bench face --variants all --lfw-only        # fills the cache once
    python3 bench/face_calibration_study.py [CACHE.bin]

Studies: (1) score fusion of the two matchers (reid-0095 cosine, dlib Euclidean; z-normalised on
the fit people's impostors) and of the two alignments; (2) calibration estimators: the pooled
empirical quantile (shipped) against person-pair-averaged FMR, cross-checked between two halves of
the fit people; (3) a selfie-versus-document-like protocol: a near-frontal reference (|yaw|, |pitch|
<= 15 deg) against images that pass the selfie's acquisition rule, at the shipped thresholds, and
which person pairs make its false matches. numpy only.
"""
import glob, hashlib, os, struct, sys
from collections import Counter

import numpy as np

SHIPPED = {1: 0.5648, 3: 0.5173}  # FaceMatchCalibration.recognizerTable, fmr_0.01
REID, REG, DLIB = 'reid0095-dlib68', 'reid0095-lmk0009', 'dlib'


def read_cache(path):
    b = open(path, 'rb').read()
    # IDVFB2: each record carries the SHA-256 of the image's bytes after its name; IDVFB1: none.
    assert b[:6] in (b'IDVFB1', b'IDVFB2'), 'not an idvd bench face cache'
    digests = b[:6] == b'IDVFB2'
    i = 6

    def u32():
        nonlocal i
        i += 4
        return struct.unpack_from('<I', b, i - 4)[0]

    def f64():
        nonlocal i
        i += 8
        return struct.unpack_from('<d', b, i - 8)[0]

    def text():
        nonlocal i
        n = u32()
        i += n
        return b[i - n:i].decode()

    out = {}
    for _ in range(u32()):
        name = text()
        if digests:
            i += 32
        [f64() for _ in range(4)]
        fell = b[i] == 1
        i += 1
        sharp = f64()
        pose = [f64(), f64(), f64()]
        disagreement = f64()
        [f64() for _ in range(u32())]
        ds = {}
        for _ in range(u32()):
            tag, n = text(), u32()
            ds[tag] = np.frombuffer(b, dtype='<f4', count=n, offset=i).astype(np.float64)
            i += 4 * n
        out[name] = dict(fell=fell, sharp=sharp, pose=pose, dis=disagreement, ds=ds)
    return out


def protocol(pp, k):
    """idvd bench face's protocol: each image against the fusion of the k after it (cyclic)."""
    sets, gen = [], []
    for p in sorted(pp):
        L = pp[p]
        if len(L) < k:
            continue
        if len(L) == k:
            sets.append((p, L))
            continue
        for i in range(len(L)):
            sets.append((p, [L[(i + j) % len(L)] for j in range(1, k + 1)]))
            gen.append((L[i], len(sets) - 1))
    return sets, gen, [(p, n) for p in sorted(pp) for n in pp[p]]


def load(argv):
    """The cache named in `argv` (else the largest one) and its people by side of the fixed split:
    (cache, fit people, eval people), each person's image names in order."""
    here = os.path.dirname(os.path.abspath(__file__))
    caches = argv or sorted(glob.glob(os.path.expanduser('~/.cache/openidv/bench/face-*.bin')), key=os.path.getsize)[-1:]
    if not caches:
        sys.exit('no bench cache: run idvd bench face --variants all --lfw-only first')
    C = read_cache(caches[0])
    print(f'cache {caches[0]}: {len(C)} images')
    split = {}
    for line in open(os.path.join(here, 'lfw-split.txt')):
        if line.strip() and not line.startswith('#'):
            person, side = line.split()
            split[person] = side
    people = {}
    for n in sorted(C):
        people.setdefault(n.split('/')[0], []).append(n)
    return (C, {p: v for p, v in people.items() if split.get(p) == 'fit'},
            {p: v for p, v in people.items() if split.get(p) == 'eval'})


def main():
    C, FIT, EVAL = load(sys.argv[1:])

    def distances(variant, sets, refs):
        R = np.stack([C[n]['ds'][variant] for _, n in refs])
        S = np.stack([np.mean([C[n]['ds'][variant] for n in s], axis=0) for _, s in sets])
        if variant == DLIB:
            return np.sqrt(np.maximum(0, (R * R).sum(1)[:, None] + (S * S).sum(1)[None, :] - 2 * R @ S.T))
        R = R / np.linalg.norm(R, axis=1, keepdims=True)
        S = S / np.linalg.norm(S, axis=1, keepdims=True)
        return 1 - R @ S.T

    def split_scores(D, sets, gen, refs):
        rp, sp = np.array([p for p, _ in refs]), np.array([p for p, _ in sets])
        ridx = {n: i for i, (_, n) in enumerate(refs)}
        return np.sort(np.array([D[ridx[r], s] for r, s in gen])), np.sort(D[rp[:, None] != sp[None, :]])

    def threshold(target, imp):
        k = int(np.floor(target * len(imp)))
        return np.nextafter(imp[k], -np.inf) if k < len(imp) else imp[-1]

    def line(t, g, imp):
        fm, fnm = int((imp <= t).sum()), int((g > t).sum())
        return f'FMR {100 * fm / len(imp):.4f} % ({fm}/{len(imp)}), FNMR {100 * fnm / len(g):.2f} % ({fnm}/{len(g)})'

    print(f'{len(FIT)} fit people, {len(EVAL)} eval people')
    print('\n(1) matcher and alignment fusion: threshold at FMR 0.01 % fitted on the fit people')
    for k in (1, 3):
        P = {g: protocol(pp, k) for g, pp in (('fit', FIT), ('eval', EVAL))}
        D = {g: {v: distances(v, P[g][0], P[g][2]) for v in (REID, REG, DLIB)} for g in P}

        def z(v):
            sets, _, refs = P['fit']
            rp, sp = np.array([p for p, _ in refs]), np.array([p for p, _ in sets])
            x = D['fit'][v][rp[:, None] != sp[None, :]]
            return x.mean(), x.std()
        Z = {v: z(v) for v in (REID, REG, DLIB)}

        def zs(g, v):
            return (D[g][v] - Z[v][0]) / Z[v][1]
        combos = [(f'{REID} (shipped)', lambda g: D[g][REID]),
                  (f'{REG}', lambda g: D[g][REG]),
                  ('mean of the two alignments\' distances', lambda g: (D[g][REID] + D[g][REG]) / 2)]
        for w in (0.1, 0.2, 0.3):
            combos.append((f'z(reid) + {w} z(dlib)', lambda g, w=w: (1 - w) * zs(g, REID) + w * zs(g, DLIB)))
        combos.append(('z(both alignments) + 0.15 z(dlib)', lambda g: 0.85 * (zs(g, REID) + zs(g, REG)) / 2 + 0.15 * zs(g, DLIB)))
        label = 'image-to-image' if k == 1 else f'fused({k})-to-image'
        for name, f in combos:
            gf, imf = split_scores(f('fit'), *P['fit'])
            ge, ime = split_scores(f('eval'), *P['eval'])
            t = threshold(1e-4, imf)
            print(f'  {label} {name}: fit (own point) {line(t, gf, imf)}; eval {line(t, ge, ime)}')

    print('\n(2) calibration estimators, fitted on one half of the fit people, realised on the other half')

    def pair_weights(D, sets, refs):
        rp, sp = np.array([p for p, _ in refs]), np.array([p for p, _ in sets])
        nr, ns = Counter(rp), Counter(sp)
        W = np.array([1 / nr[p] for p in rp])[:, None] * np.array([1 / ns[p] for p in sp])[None, :]
        m = rp[:, None] != sp[None, :]
        d, w = D[m], W[m]
        o = np.argsort(d)
        return d[o], w[o] / w[o].sum()

    def half(pp, h):
        return {p: v for p, v in pp.items() if hashlib.sha256(p.encode()).digest()[0] & 1 == h}
    for k in (1, 3):
        for a, b, name in ((half(FIT, 0), half(FIT, 1), 'fit half A -> half B'), (half(FIT, 1), half(FIT, 0), 'fit half B -> half A')):
            pa, pb = protocol(a, k), protocol(b, k)
            Da, Db = distances(REID, pa[0], pa[2]), distances(REID, pb[0], pb[2])
            ga, ia = split_scores(Da, *pa)
            gb, ib = split_scores(Db, *pb)
            d, w = pair_weights(Da, pa[0], pa[2])
            tp = threshold(1e-4, ia)
            c = np.cumsum(w)
            j = np.searchsorted(c, 1e-4, side='right')
            tw = np.nextafter(d[j], -np.inf)
            print(f'  k={k} {name}: pooled quantile t={tp:.4f} {line(tp, gb, ib)}; person-pair-averaged t={tw:.4f} {line(tw, gb, ib)}')

    print('\n(3) near-frontal reference against acquisition-passing probes, shipped thresholds')

    def acquired(n):
        m = C[n]
        y, p, r = m['pose']
        return not m['fell'] and not np.isnan(y) and abs(y) <= 25 and abs(p) <= 25 and abs(r) <= 20

    def frontal(n):
        y, p, _ = C[n]['pose']
        return acquired(n) and abs(y) <= 15 and abs(p) <= 15
    for g, pp in (('fit', FIT), ('eval', EVAL)):
        for k in (1, 3):
            sets, gen, refs = [], [], []
            for p in sorted(pp):
                L = pp[p]
                refs += [(p, n) for n in L if frontal(n)]
                for r in L:
                    others = [n for n in L if n != r and acquired(n)]
                    if not frontal(r) or len(others) < k:
                        continue
                    i = L.index(r)
                    sets.append((p, sorted(others, key=lambda n: (L.index(n) - i) % len(L))[:k]))
                    gen.append((r, len(sets) - 1))
            D = distances(REID, sets, refs)
            gs, imp = split_scores(D, sets, gen, refs)
            rp, sp = np.array([p for p, _ in refs]), np.array([p for p, _ in sets])
            hits = Counter(tuple(sorted((rp[i], sp[j]))) for i, j in np.argwhere((D <= SHIPPED[k]) & (rp[:, None] != sp[None, :])))
            top = ', '.join(f'{a}/{b} {n}' for (a, b), n in hits.most_common(3))
            label = 'image' if k == 1 else f'fused({k})'
            print(f'  {g}: frontal reference vs {label} of acquisition-passing images: {line(SHIPPED[k], gs, imp)}'
                  + (f'; false matches mostly {top}' if top else ''))


if __name__ == '__main__':
    main()
