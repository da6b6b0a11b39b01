#!/usr/bin/env python3
"""Issue 34 (face matching), third pass: two score-level ideas measured on the cached descriptors of
`idvd bench face` (reid-0095 with dlib's 68 points: what FaceKit ships), with the bench's protocols
and the fixed person split (bench/lfw-split.txt). Choices are read on the fit people only; eval
lines are printed for the report.

    idvd bench face --variants all --lfw-only        # fills the cache once
    python3 bench/face_score_norm_study.py [CACHE.bin]

(A) Cohort score normalisation (AS-norm, Sturim & Reynolds 2005; Matejka et al. 2017): a score
    s(a, b) becomes ((s - mu_a)/sd_a + (s - mu_b)/sd_b) / 2, mu and sd over the K highest cosine
    similarities of each side to a cohort of other people's images; "mean" subtracts the two top-K
    means only. The cohort is one third of the fit people (by a hash of the name), thresholds are
    fitted on the other two thirds, so the baseline is printed on those same people.
(B) Pose-aware scores (in the spirit of quality-aware scoring, QMagFace, Terhoerst et al. 2023):
    s + w * q with q from dlib's pose estimate (|yaw| + |pitch|/2) / 45 deg, capped at 1: the larger
    of the two sides' q ("max"), their sum ("sum") or their difference ("diff"); a fused set's q is
    its most frontal image's. Thresholds fitted on all fit people.

Each line: FNMR at the fit people's own FMR 0.01 % point, then the eval people's FMR and FNMR at
that threshold, then FNMR at the eval people's own 0.01 % point (a reading, never a choice).
"""
import hashlib, os, sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import face_calibration_study as study  # noqa: E402  (the cache reader and the protocol)
from face_calibration_study import protocol  # noqa: E402

TARGET = 1e-4


def unit(x):
    return x / np.linalg.norm(x, axis=-1, keepdims=True)


def threshold(imp):
    """Similarity line: a comparison matches when its score is above it; FMR <= TARGET on `imp`."""
    k = int(np.floor(TARGET * len(imp)))
    return np.sort(imp)[len(imp) - 1 - k]


def split_third(people):
    """One third of `people` (by a hash of the name: the same third every run) and the other two."""
    third = lambda p: int(hashlib.sha256(p.encode()).hexdigest(), 16) % 3  # noqa: E731
    return ({p: v for p, v in people.items() if third(p) == 0}, {p: v for p, v in people.items() if third(p) != 0})


def report(label, fit, ev):
    (gf, impf), (ge, impe) = fit, ev
    t, te = threshold(impf), threshold(impe)
    fm, fn = int((impe > t).sum()), int((ge <= t).sum())
    print(f'{label}: fit FNMR {100 * (gf <= t).mean():.2f} % | eval FMR {100 * fm / len(impe):.4f} % ({fm}/{len(impe)}), '
          f'FNMR {100 * fn / len(ge):.2f} % ({fn}/{len(ge)}) | eval own point FNMR {100 * (ge <= te).mean():.2f} %', flush=True)


def main():
    C, FIT, EVAL = study.load(sys.argv[1:])
    V = study.REID
    COHORT, FIT2 = split_third(FIT)
    cohort = unit(np.stack([C[n]['ds'][V] for p in COHORT for n in COHORT[p]]))
    print(f'{len(FIT)} fit people ({len(COHORT)} of them the cohort, {len(cohort)} images), {len(EVAL)} eval people')

    def matrix(pp, k):
        sets, gen, refs = protocol(pp, k)
        R = unit(np.stack([C[n]['ds'][V] for _, n in refs]))
        S = unit(np.stack([np.mean([unit(C[n]['ds'][V]) for n in s], axis=0) for _, s in sets]))
        rp, sp = np.array([p for p, _ in refs]), np.array([p for p, _ in sets])
        ridx = {n: i for i, (_, n) in enumerate(refs)}
        gi = np.array([[ridx[r], s] for r, s in gen])
        return dict(M=R @ S.T, R=R, S=S, refs=refs, sets=sets, mask=rp[:, None] != sp[None, :], gi=gi)

    def scores(d, A):
        return A[d['gi'][:, 0], d['gi'][:, 1]], A[d['mask']]

    def top(X, K):
        S = -np.sort(-(X @ cohort.T), axis=1)[:, :K]
        return S.mean(1), S.std(1)

    print('\n(A) cohort normalisation; thresholds on the two thirds of the fit people outside the cohort')
    for k in (1, 3):
        fit, ev = matrix(FIT2, k), matrix(EVAL, k)
        report(f'k={k} raw cosine', scores(fit, fit['M']), scores(ev, ev['M']))
        for mode, K in [('as', 100), ('as', 200), ('as', 400), ('mean', 100)]:
            out = []
            for d in (fit, ev):
                (mr, sr), (ms, ss) = top(d['R'], K), top(d['S'], K)
                A = (0.5 * ((d['M'] - mr[:, None]) / sr[:, None] + (d['M'] - ms[None, :]) / ss[None, :]) if mode == 'as'
                     else d['M'] - 0.5 * (mr[:, None] + ms[None, :]))
                out.append(scores(d, A))
            report(f'k={k} {mode}-norm K={K}', *out)

    print('\n(B) pose-aware scores; thresholds on all fit people')
    q = lambda n: min(1.0, (abs(C[n]['pose'][0]) + 0.5 * abs(C[n]['pose'][1])) / 45.0)  # noqa: E731
    for k in (1, 3):
        fit, ev = matrix(FIT, k), matrix(EVAL, k)
        for d in (fit, ev):
            d['qr'] = np.array([q(n) for _, n in d['refs']])
            d['qs'] = np.array([min(q(n) for n in s) for _, s in d['sets']])
        for mode in ('max', 'sum', 'diff'):
            for w in (0.0, 0.05, 0.1, 0.2):
                out = []
                for d in (fit, ev):
                    Q = {'max': np.maximum(d['qr'][:, None], d['qs'][None, :]), 'sum': d['qr'][:, None] + d['qs'][None, :],
                         'diff': np.abs(d['qr'][:, None] - d['qs'][None, :])}[mode]
                    out.append(scores(d, d['M'] + w * Q))
                report(f'k={k} {mode} w={w}', *out)


if __name__ == '__main__':
    main()
