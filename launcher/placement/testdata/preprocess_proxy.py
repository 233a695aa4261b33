#!/usr/bin/env python3
"""Time what one vLLM API process does to each image of an NPCBench plane group.

Proxy for the default image-preprocessing rate in package placement
(DefaultPreprocessImagesPerS). It repeats, in Pillow and numpy only, the steps
of transformers' Qwen2VLImageProcessor (the "slow" processor vLLM runs for the
Qwen2.5-VL/Qwen3-VL/Lingshu family) on a 512x1644 8-bit grayscale PNG:
decode, convert to RGB, smart-resize to multiples of 28 with bicubic
resampling, rescale and normalise to float32, and patchify (temporal patch 2,
patch 14, merge 2). It leaves out what vLLM adds around it (chat template,
tokenisation, placeholder expansion, hashing for the processor cache, IPC of
the pixel tensor to the engine core), so the real rate is lower.

Usage: /usr/bin/python3 preprocess_proxy.py [N]   (N images, default 200)
"""
import io
import sys
import time

import numpy as np
from PIL import Image

W, H = 512, 1644
PATCH, MERGE, TEMPORAL = 14, 2, 2
MEAN = np.array([0.48145466, 0.4578275, 0.40821073], dtype=np.float32)
STD = np.array([0.26862954, 0.26130258, 0.27577711], dtype=np.float32)


def plane_group_png():
    # Three 512x548 tiles of smooth anatomy-like gradients with noise, as
    # imaging/prep writes them: 8-bit grayscale PNG.
    rng = np.random.default_rng(1)
    y, x = np.mgrid[0:H, 0:W]
    img = 120 + 80 * np.sin(x / 37.0) * np.cos(y / 53.0) + rng.normal(0, 12, (H, W))
    img = np.clip(img, 0, 255).astype(np.uint8)
    buf = io.BytesIO()
    Image.fromarray(img, "L").save(buf, format="PNG")
    return buf.getvalue()


def smart_resize(h, w, factor=PATCH * MERGE):
    return max(factor, round(h / factor) * factor), max(factor, round(w / factor) * factor)


def preprocess(data):
    im = Image.open(io.BytesIO(data)).convert("RGB")
    h, w = smart_resize(im.height, im.width)
    im = im.resize((w, h), Image.BICUBIC)
    a = np.asarray(im, dtype=np.float32) * (1 / 255.0)
    a = (a - MEAN) / STD
    a = a.transpose(2, 0, 1)[None]  # 1, C, H, W
    a = np.repeat(a, TEMPORAL, axis=0)  # temporal patch of 2 frames
    gh, gw = h // PATCH, w // PATCH
    a = a.reshape(1, TEMPORAL, 3, gh // MERGE, MERGE, PATCH, gw // MERGE, MERGE, PATCH)
    a = a.transpose(0, 3, 6, 4, 7, 2, 1, 5, 8)
    return np.ascontiguousarray(a.reshape(gh * gw, 3 * TEMPORAL * PATCH * PATCH))


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 200
    data = plane_group_png()
    preprocess(data)  # warm up
    # CPU time of this process, not wall time: on a shared machine other
    # jobs would otherwise count against the rate.
    best = None
    for _ in range(3):
        t0 = time.process_time()
        for _ in range(n):
            out = preprocess(data)
        dt = (time.process_time() - t0) / n
        best = dt if best is None else min(best, dt)
    print(f"png {len(data)} bytes, patches {out.shape}: {best * 1e3:.1f} ms CPU/image, "
          f"{1 / best:.1f} images/s (best of 3 x {n})")


if __name__ == "__main__":
    main()
