#!/usr/bin/python3
"""Compares two output folders image by image on decoded RGB pixels.

Usage: compare.py GO_OUT PY_OUT  (exit status 1 when any image differs)
"""
import os
import sys

import numpy as np
from PIL import Image


def main():
    a, b = sys.argv[1], sys.argv[2]
    same = diff = missing = 0
    for dirpath, _, files in os.walk(b):
        for f in sorted(files):
            if not f.endswith(".png"):
                continue
            rel = os.path.relpath(os.path.join(dirpath, f), b)
            pa = os.path.join(a, rel)
            if not os.path.exists(pa):
                missing += 1
                print("missing in", a, rel)
                continue
            ia = np.asarray(Image.open(pa).convert("RGB"))
            ib = np.asarray(Image.open(os.path.join(b, rel)).convert("RGB"))
            if ia.shape == ib.shape and np.array_equal(ia, ib):
                same += 1
            else:
                diff += 1
                n = int((ia != ib).any(axis=-1).sum()) if ia.shape == ib.shape else -1
                print("differs:", rel, ia.shape, ib.shape, "pixels:", n)
    print("compare: %d identical, %d different, %d missing" % (same, diff, missing))
    sys.exit(1 if diff or missing else 0)


if __name__ == "__main__":
    main()
