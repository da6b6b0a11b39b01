"""Numerical check of the two Intel ONNX files FaceKit ships against Intel's own runtime.

The ONNX files in Sources/FaceKit/Models/face-reid-0095/ were converted from Intel's OpenVINO IR
(FP16 weights) by ../shared/models/face-reid-0095/ir2onnx.py. This script runs, on real face crops
of the committed fixtures:
  - the original IR (xml + bin) in OpenVINO's runtime (the reference, as Intel runs it),
  - the shipped ONNX file in OpenVINO's runtime (a check of the conversion),
and writes the crops (PNG) and the IR's outputs to Tests/Fixtures/recognition/, where
FaceKitTests.RecognitionModelTests runs the same ONNX files through Debian's OpenCV 4.6 dnn (the
runtime FaceKit uses) and compares them with these reference outputs.

Crops: for each face of `idvd face detect IMAGE --landmarks` (JSON files given on the command
line, beside their images), the face box resampled to 48x48 (landmarks-regression-retail-0009's
input) and the face aligned by the similarity transform of its 5 points (eye centres of dlib's
68, nose tip 30, mouth corners 48/54) onto the 128x128 template (face-reidentification-retail-0095's
input); both bilinear, RGB PNG. The networks read BGR 0-255 NCHW.

Run (a throw-away virtual environment; nothing here is a dependency of the project):
    python3 -m venv /tmp/ov && /tmp/ov/bin/pip install numpy pillow openvino==2024.0.0
    for f in Tests/Fixtures/faces/obama-480p.jpg …; do .build/release/idvd face detect $f --landmarks > /tmp/$(basename $f).json; done
    /tmp/ov/bin/python bench/intel_onnx_check.py ../shared/models/face-reid-0095 Tests/Fixtures/recognition IMAGE=JSON …
"""
import json
import os
import sys

import numpy as np
import openvino as ov
from PIL import Image

TEMPLATE = np.array([[40.39, 59.08], [87.38, 59.08], [64.03, 81.98], [44.73, 105.56], [83.64, 105.56]])
# Full fp32 arithmetic: the CPU plugin may otherwise run in bf16 on CPUs that have it.
FP32 = {"INFERENCE_PRECISION_HINT": "f32"}
REID = "face-reidentification-retail-0095"
LMK = "landmarks-regression-retail-0009"


def five_points(p68):
    p = np.array([[q["x"], q["y"]] for q in p68])
    return np.array([p[36:42].mean(0), p[42:48].mean(0), p[30], p[48], p[54]])


def similarity(src, dst):
    """Least-squares similarity (Umeyama, 2-D, no reflection) taking src to dst: 2x3 matrix."""
    sm, dm = src.mean(0), dst.mean(0)
    s, d = src - sm, dst - dm
    norm = (s ** 2).sum()
    a = (s[:, 0] * d[:, 0] + s[:, 1] * d[:, 1]).sum() / norm
    b = (s[:, 0] * d[:, 1] - s[:, 1] * d[:, 0]).sum() / norm
    return np.array([[a, -b, dm[0] - (a * sm[0] - b * sm[1])], [b, a, dm[1] - (b * sm[0] + a * sm[1])]])


def warp(image, m, size):
    """`image` warped by the 2x3 forward matrix m to size x size (PIL wants the inverse map)."""
    full = np.vstack([m, [0, 0, 1]])
    inv = np.linalg.inv(full)
    return image.transform((size, size), Image.AFFINE, tuple(inv[:2].reshape(-1)), resample=Image.BILINEAR)


def blob(image):
    rgb = np.asarray(image.convert("RGB"), dtype=np.float32)
    return rgb[:, :, ::-1].transpose(2, 0, 1)[None].copy()  # BGR, NCHW


def main():
    models, out = sys.argv[1], sys.argv[2]
    pairs = [a.split("=", 1) for a in sys.argv[3:]]
    os.makedirs(out, exist_ok=True)
    core = ov.Core()
    run = {}
    for name in (REID, LMK):
        ir = core.compile_model(core.read_model(os.path.join(models, name + ".xml"), os.path.join(models, name + ".bin")), "CPU", FP32)
        onnx = core.compile_model(core.read_model(os.path.join(models, name + "_opset11_fp32.onnx")), "CPU", FP32)
        run[name] = (ir, onnx)
    faces = []
    worst = {REID: 0.0, LMK: 0.0}
    for image_path, json_path in pairs:
        image = Image.open(image_path).convert("RGB")
        detected = json.load(open(json_path))
        for i, f in enumerate(detected["faces"]):
            stem = "%s_%d" % (os.path.splitext(os.path.basename(image_path))[0], i)
            b = f["box"]
            crop_m = np.array([[48 / (b["right"] - b["left"]), 0, -b["left"] * 48 / (b["right"] - b["left"])],
                               [0, 48 / (b["bottom"] - b["top"]), -b["top"] * 48 / (b["bottom"] - b["top"])]])
            crop = warp(image, crop_m, 48)
            aligned = warp(image, similarity(five_points(f["landmarks68"]), TEMPLATE), 128)
            crop.save(os.path.join(out, stem + "_crop48.png"))
            aligned.save(os.path.join(out, stem + "_aligned128.png"))
            entry = {"name": stem, "source": os.path.basename(image_path)}
            for name, x, key in ((LMK, blob(crop), "landmarks"), (REID, blob(aligned), "embedding")):
                ir, onnx = run[name]
                a = np.asarray(ir(x)[ir.output(0)], dtype=np.float64).reshape(-1)
                c = np.asarray(onnx(x)[onnx.output(0)], dtype=np.float64).reshape(-1)
                worst[name] = max(worst[name], float(np.abs(a - c).max()))
                entry[key] = [round(float(v), 7) for v in a]
            faces.append(entry)
    json.dump({"runtime": "OpenVINO " + ov.get_version(), "ir_vs_onnx_max_abs_difference": worst, "faces": faces},
              open(os.path.join(out, "openvino_reference.json"), "w"), indent=1)
    print("faces:", len(faces), "IR vs ONNX in OpenVINO, largest absolute difference:", worst)


if __name__ == "__main__":
    main()
