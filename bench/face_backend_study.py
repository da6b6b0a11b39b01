#!/usr/bin/env python3
"""Issue 34 (face matching), fourth pass: learned linear back-ends on reid-0095's 256-d descriptors
(dlib's 68 points: what FaceKit ships), measured on the cached descriptors of `idvd bench face`
with its protocols and the fixed person split (bench/lfw-split.txt).

    idvd bench face --variants all --lfw-only        # fills the cache once
    python3 bench/face_backend_study.py [CACHE.bin]

Back-ends, each a matrix applied to the L2-normalised descriptor before the cosine (what speaker and
face verification put between an embedding and its score):
  centre  subtract the training images' mean descriptor (domain centring);
  wccn    within-class covariance normalisation (Hatch, Kajarekar & Stolcke 2006): centre, then
          W = (S_w + lambda I)^(-1/2), S_w the pooled within-person covariance;
  lda     linear discriminant analysis to d dimensions (S_b against S_w + lambda I), whitened.
The back-end is trained on one third of the fit people (by a hash of the name, the third the AS-norm
study used as its cohort) and thresholds are fitted on the other two thirds, so no threshold is set on
people the back-end was trained on; the identity row is printed on those same people. A second block
trains on all fit people and fits on them too, to show how much an in-sample fit flatters.

Each line: FNMR at the fit people's own FMR 0.01 % point | the eval people's FMR and FNMR at that line
| FNMR at the eval people's own 0.01 % point (a reading, never a choice).
"""
import os, sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import face_calibration_study as study  # noqa: E402  (the cache reader and the protocol)
from face_calibration_study import protocol  # noqa: E402
from face_score_norm_study import report, split_third, unit  # noqa: E402


def train(C, people, V, kind, lam=0.0, dims=None):
    """The back-end's matrix (256 x d) and centre, from `people`'s descriptors."""
    X, y = [], []
    for i, p in enumerate(sorted(people)):
        for n in people[p]:
            X.append(unit(C[n]['ds'][V]))
            y.append(i)
    X, y = np.array(X), np.array(y)
    mu = X.mean(0)
    if kind == 'identity':
        return np.eye(X.shape[1]), np.zeros_like(mu)
    if kind == 'centre':
        return np.eye(X.shape[1]), mu
    Xc = X - mu
    means = np.stack([Xc[y == c].mean(0) for c in np.unique(y)])
    counts = np.array([(y == c).sum() for c in np.unique(y)])
    multi = counts >= 2
    Sw = np.zeros((X.shape[1], X.shape[1]))
    nw = 0
    for c, m in zip(np.unique(y)[multi], means[multi]):
        D = Xc[y == c] - m
        Sw += D.T @ D
        nw += len(D)
    Sw /= max(1, nw - multi.sum())
    Sw += lam * np.trace(Sw) / len(Sw) * np.eye(len(Sw))
    if kind == 'wccn':
        e, U = np.linalg.eigh(Sw)
        return U @ np.diag(e ** -0.5) @ U.T, mu
    if kind == 'lda':
        Sb = (means * counts[:, None]).T @ means / counts.sum()
        e, U = np.linalg.eigh(Sw)
        Wh = U @ np.diag(e ** -0.5) @ U.T
        e2, U2 = np.linalg.eigh(Wh @ Sb @ Wh)
        order = np.argsort(-e2)[:dims]
        return Wh @ U2[:, order], mu
    raise ValueError(kind)


def matrix(C, pp, k, V, P, mu):
    sets, gen, refs = protocol(pp, k)

    def proj(vs):
        return unit((np.stack(vs) - mu) @ P)
    R = proj([unit(C[n]['ds'][V]) for _, n in refs])
    # A fused set: the mean of its images' normalised descriptors (FaceTemplate's fusion), then projected.
    S = proj([unit(np.mean([unit(C[n]['ds'][V]) for n in s], axis=0)) for _, s in sets])
    rp, sp = np.array([p for p, _ in refs]), np.array([p for p, _ in sets])
    ridx = {n: i for i, (_, n) in enumerate(refs)}
    gi = np.array([[ridx[r], s] for r, s in gen])
    M = R @ S.T
    return M[gi[:, 0], gi[:, 1]], M[rp[:, None] != sp[None, :]]


def main():
    C, FIT, EVAL = study.load(sys.argv[1:])
    V = study.REID
    TRAIN, FIT2 = split_third(FIT)
    print(f'{len(FIT)} fit people: back-ends trained on {len(TRAIN)} ({sum(map(len, TRAIN.values()))} images, '
          f'{sum(len(v) >= 2 for v in TRAIN.values())} with 2 or more), thresholds on {len(FIT2)}; {len(EVAL)} eval people')
    configs = [('identity', {}), ('centre', {})]
    configs += [('wccn', dict(lam=l)) for l in (0.1, 0.3, 1.0, 3.0)]
    configs += [('lda', dict(lam=l, dims=d)) for l in (0.3, 1.0) for d in (64, 128, 200)]
    for block, tr, fit in (('trained on a third, thresholds on the other two thirds', TRAIN, FIT2),
                           ('trained and thresholds on all fit people (in-sample)', FIT, FIT)):
        print(f'\n{block}')
        for k in (1, 3):
            for kind, kw in configs:
                P, mu = train(C, tr, V, kind, **kw)
                report(f'k={k} {kind} {kw}', matrix(C, fit, k, V, P, mu), matrix(C, EVAL, k, V, P, mu))


if __name__ == '__main__':
    main()
