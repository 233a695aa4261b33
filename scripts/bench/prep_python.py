#!/usr/bin/python3
"""The Python pipeline npcorch prep is measured against.

It does what a user would otherwise write with Debian's Pillow and numpy
(and pydicom for DICOM series: a series folder without series.json is read
with pydicom.dcmread, the stored values masked to BitsStored, sign-extended,
rescaled and windowed with numpy), and produces the same images as `npcorch prep`
for three kinds of output: axial/coronal plane groups (T range), structure
cards, and pathology overviews (openslide-python's get_thumbnail logic on a
plain slide image). PNGs are written with Pillow's defaults (zlib level 6).

Usage: prep_python.py --data DIR --out DIR --font font7x13.png [--workers N]
The patients' cohorts choose the outputs, as in npcorch prep.
"""
import argparse
import json
import math
import os
from multiprocessing import Pool

import numpy as np
from PIL import Image

try:
    import pydicom
    import pydicom.multival
except ImportError:  # only DICOM series need it
    pydicom = None

TILE, CAPTION, BOX_LINE, OVERVIEW = 512, 36, 3, 1024
CARD_ROWS = ["T1_Ax", "T2_Ax", "T1+C_Ax", "T1+C_COR_FS"]
AXIAL = ["T1_Ax", "T2_Ax", "T1+C_Ax"]
CORONAL = ["T1+C_COR_FS", "T1_COR"]
FONT = None


def normal(o):
    r, c = o[:3], o[3:]
    n = [r[1] * c[2] - r[2] * c[1], r[2] * c[0] - r[0] * c[2], r[0] * c[1] - r[1] * c[0]]
    ln = math.sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2])
    return [n[0] / ln, n[1] / ln, n[2] / ln]


def dot(a, b):
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


def percentile_window(v):
    """8 bits from the 0.5th to the 99.5th percentile, as npcorch."""
    s = np.sort(v, axis=None)
    n = len(s) - 1
    lo, hi = s[int(math.floor(0.005 * n))], s[int(math.ceil(0.995 * n))]
    if not hi > lo:
        hi = lo + 1
    k = 255 / (hi - lo)
    return np.clip(np.floor((v - lo) * k + 0.5), 0, 255).astype(np.uint8)


def voi_window(v, c, w):
    """DICOM VOI LINEAR window (PS3.3 C.11.2.1.2), as npcorch."""
    lo, hi = c - 0.5 - (w - 1) / 2, c - 0.5 + (w - 1) / 2
    den = w - 1 if w - 1 > 0 else 1
    out = np.clip(np.floor(((v - (c - 0.5)) / den + 0.5) * 255 + 0.5), 0, 255)
    out[v <= lo] = 0
    out[v > hi] = 255
    return out.astype(np.uint8)


def dicom_slice(ds):
    """A DICOM slice's stored values, rescaled, windowed to 8 bits."""
    bits = int(ds.BitsStored)
    mask = (1 << bits) - 1
    a = ds.pixel_array.astype(np.int64) & mask
    if int(ds.PixelRepresentation) == 1:
        a = np.where(a & (1 << (bits - 1)), a - (mask + 1), a)
    v = a.astype(np.float64) * float(getattr(ds, "RescaleSlope", 1) or 1) + float(getattr(ds, "RescaleIntercept", 0))
    c, w = getattr(ds, "WindowCenter", None), getattr(ds, "WindowWidth", None)
    if c is not None and w is not None:
        c = float(c[0] if isinstance(c, pydicom.multival.MultiValue) else c)
        w = float(w[0] if isinstance(w, pydicom.multival.MultiValue) else w)
        if w >= 1:
            return voi_window(v, c, w)
    return percentile_window(v)


class Series:
    def __init__(self, root, d, sequence):
        self.dir = os.path.join(root, d)
        self.cache = {}
        side = os.path.join(self.dir, "series.json")
        if os.path.exists(side):
            with open(side) as f:
                self.meta = json.load(f)
            self.datasets = None
        else:  # DICOM: geometry from the headers, pixels when first used
            self.datasets = {}
            slices = []
            for name in sorted(os.listdir(self.dir)):
                ds = pydicom.dcmread(os.path.join(self.dir, name))
                self.datasets[name] = ds
                slices.append({"file": name, "instance": int(ds.InstanceNumber),
                               "position": [float(x) for x in ds.ImagePositionPatient]})
            ds = self.datasets[slices[0]["file"]]
            self.meta = {"sequence": sequence, "orientation": [float(x) for x in ds.ImageOrientationPatient],
                         "pixel_spacing": [float(x) for x in ds.PixelSpacing],
                         "slice_thickness": float(ds.SliceThickness), "slices": slices}
        n = normal(self.meta["orientation"])
        self.slices = sorted(self.meta["slices"], key=lambda s: (dot(n, s["position"]), s["instance"]))

    def image(self, i):
        if i not in self.cache:
            if self.datasets is not None:
                self.cache[i] = dicom_slice(self.datasets[self.slices[i]["file"]])
                return self.cache[i]
            im = Image.open(os.path.join(self.dir, self.slices[i]["file"]))
            if im.mode == "L":
                a = np.asarray(im)
            else:  # 16-bit: percentile window, as npcorch
                a = percentile_window(np.asarray(im).astype(np.float64))
            self.cache[i] = a
        return self.cache[i]


def fit_tile(series, i):
    a = series.image(i)
    h, w = a.shape
    rs, cs = series.meta["pixel_spacing"]
    pw, ph = w * cs, h * rs
    s = min(TILE / pw, TILE / ph)
    tw = min(max(int(math.floor(pw * s + 0.5)), 1), TILE)
    th = min(max(int(math.floor(ph * s + 0.5)), 1), TILE)
    r = np.asarray(Image.fromarray(a, "L").resize((tw, th), Image.LANCZOS))
    tile = np.zeros((TILE, TILE), np.uint8)
    x, y = (TILE - tw) // 2, (TILE - th) // 2
    tile[y:y + th, x:x + tw] = r
    return tile, (x, y, tw, th, w, h)


def draw_caption(canvas, top, text):
    gy0 = top + (CAPTION - 26) // 2
    cx = 8
    for ch in text:
        o = ord(ch)
        if o < 0x20 or o >= 0x7F:
            o = ord("?")
        if cx + 12 > TILE:
            break
        g = FONT[(o - 0x20) * 13:(o - 0x20) * 13 + 13] >= 0x80
        big = np.repeat(np.repeat(g, 2, axis=0), 2, axis=1)
        region = canvas[gy0:gy0 + 26, cx:cx + 12]
        region[big] = 255
        cx += 14


def plan_groups(ref_and_others, keep):
    ref = ref_and_others[0]
    n = normal(ref.meta["orientation"])
    rp = [dot(n, s["position"]) for s in ref.slices]
    partners = []
    for o in ref_and_others[1:]:
        half = o.meta["slice_thickness"] / 2 or ref.meta["slice_thickness"] / 2
        op = [dot(n, s["position"]) for s in o.slices]
        order = sorted(range(len(op)), key=lambda j: (op[j], o.slices[j]["instance"]))
        sp = [op[j] for j in order]
        m = []
        import bisect
        for p in rp:
            k = bisect.bisect_left(sp, p)
            best, bd = -1, math.inf
            for j in (k - 1, k):
                if 0 <= j < len(sp) and abs(sp[j] - p) < bd:
                    best, bd = order[j], abs(sp[j] - p)
            m.append(best if best >= 0 and bd <= half else -1)
        partners.append(m)
    groups = []
    for i, p in enumerate(rp):
        if keep and not keep(p):
            continue
        rows = [(ref, i, p)]
        ok = True
        for k, o in enumerate(ref_and_others[1:]):
            j = partners[k][i]
            if j < 0:
                ok = False
                break
            rows.append((o, j, dot(n, o.slices[j]["position"])))
        if ok:
            groups.append((p, rows))
    return groups


def render_group(rows):
    step = CAPTION + TILE
    canvas = np.zeros((step * len(rows), TILE), np.uint8)
    for k, (s, i, pos) in enumerate(rows):
        tile, _ = fit_tile(s, i)
        draw_caption(canvas, k * step, "%s  %+.1f mm" % (s.meta["sequence"], pos))
        canvas[k * step + CAPTION:(k + 1) * step] = tile
    return Image.fromarray(canvas, "L")


def render_card(finding, series):
    canvas = np.zeros((TILE * len(CARD_ROWS), TILE * 3), np.uint8)
    rects = []
    for r, seq in enumerate(CARD_ROWS):
        s = series[seq]
        idx = {sl["instance"]: i for i, sl in enumerate(s.slices)}
        boxes, best, best_area = {}, -1, 0
        for b in finding["boxes"]:
            if b["sequence"] != seq:
                continue
            i = idx[b["instance"]]
            area = (b["x1"] - b["x0"]) * (b["y1"] - b["y0"])
            boxes[i] = (b["x0"], b["y0"], b["x1"], b["y1"])
            if area > best_area or (area == best_area and i < best):
                best, best_area = i, area
        n = len(s.slices)
        start = min(max(best - 1, 0), max(n - 3, 0))
        for c in range(3):
            i = min(start + c, n - 1)
            tile, (fx, fy, fw, fh, sw, sh) = fit_tile(s, i)
            canvas[r * TILE:(r + 1) * TILE, c * TILE:(c + 1) * TILE] = tile
            x0, y0, x1, y1 = boxes.get(i, boxes[best])
            rx0 = max(fx + math.floor(x0 * fw / sw), fx)
            ry0 = max(fy + math.floor(y0 * fh / sh), fy)
            rx1 = min(fx + math.ceil(x1 * fw / sw), fx + fw)
            ry1 = min(fy + math.ceil(y1 * fh / sh), fy + fh)
            if rx1 > rx0 and ry1 > ry0:
                rects.append((rx0 + c * TILE, ry0 + r * TILE, rx1 + c * TILE, ry1 + r * TILE))
    mask = np.zeros(canvas.shape, bool)
    t = BOX_LINE
    for x0, y0, x1, y1 in rects:
        mask[y0:y1, x0:x1] = True
        if x1 - x0 > 2 * t and y1 - y0 > 2 * t:
            mask[y0 + t:y1 - t, x0 + t:x1 - t] = False
    used = np.bincount(canvas.ravel(), minlength=256) > 0
    unused = np.nonzero(~used)[0]
    if len(unused):
        yi = int(unused[-1])
        idx = canvas.copy()
        idx[mask] = yi
        im = Image.fromarray(idx, "P")
        pal = [v for g in range(256) for v in (g, g, g)]
        pal[3 * yi:3 * yi + 3] = [255, 255, 0]
        im.putpalette(pal)
        return im
    rgb = np.repeat(canvas[:, :, None], 3, axis=2)
    rgb[mask] = (255, 255, 0)
    return Image.fromarray(rgb, "RGB")


def overview(path, size):
    # openslide-python get_thumbnail on a one-level slide: composite the
    # level on the background, then thumbnail with LANCZOS.
    tile = Image.open(path).convert("RGBA")
    thumb = Image.new("RGB", tile.size, "#ffffff")
    thumb.paste(tile, None, tile)
    thumb.thumbnail((size, size), Image.LANCZOS)
    return thumb


def save(img, out, rel):
    p = os.path.join(out, rel)
    os.makedirs(os.path.dirname(p), exist_ok=True)
    img.save(p)


def do_patient(args):
    root, out, p = args
    n = 0
    if p.get("pathology"):
        save(overview(os.path.join(root, p["pathology"]["file"]), OVERVIEW), out, p["id"] + "/overview.png")
        n += 1
    cohorts = p.get("cohorts", [])
    if not ({"cards", "t_groups"} & set(cohorts)):
        return n
    series = {}
    for ref in p["series"]:
        if ref["sequence"] not in series:
            series[ref["sequence"]] = Series(root, ref["dir"], ref["sequence"])
    if "cards" in cohorts:
        for i, f in enumerate(p.get("structures", [])):
            save(render_card(f, series), out, "%s/card_%02d.png" % (p["id"], i + 1))
            n += 1
    if "t_groups" in cohorts:
        rng = p["coverage"]["t"]
        lo, hi = sorted((rng["from"], rng["to"]))
        ax = plan_groups([series[s] for s in AXIAL], lambda z: lo <= z <= hi)
        ax.sort(key=lambda g: -g[1][0][0].slices[g[1][0][1]]["position"][2])
        co = plan_groups([series[s] for s in CORONAL], None)
        co.sort(key=lambda g: g[1][0][0].slices[g[1][0][1]]["position"][1])
        for i, (_, rows) in enumerate(ax + co):
            save(render_group(rows), out, "%s/t_%03d.png" % (p["id"], i + 1))
            n += 1
    return n


def init(font):
    global FONT
    FONT = np.asarray(Image.open(font))[:, :, 3]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--font", required=True)
    ap.add_argument("--workers", type=int, default=os.cpu_count())
    a = ap.parse_args()
    with open(os.path.join(a.data, "dataset.json")) as f:
        ds = json.load(f)
    jobs = [(a.data, a.out, p) for p in ds["patients"]]
    with Pool(a.workers, initializer=init, initargs=(a.font,)) as pool:
        n = sum(pool.imap(do_patient, jobs))
    print("python: %d images" % n)


if __name__ == "__main__":
    main()
