#!/usr/bin/python3
"""The Python side of the header-scan benchmark (scripts/bench/run.sh).

Reads the header of every file under DIR with
pydicom.dcmread(stop_before_pixels=True) and the same fields as
scripts/bench/dicomscan (Go), in one thread; files that are not DICOM are
skipped.

Usage: dicomscan.py [--repeat N] DIR   (N scans of DIR)
"""
import argparse
import os

import pydicom
import pydicom.errors

FIELDS = ["PatientID", "StudyInstanceUID", "SeriesInstanceUID", "SeriesDescription", "Modality", "SeriesNumber",
          "InstanceNumber", "ImagePositionPatient", "ImageOrientationPatient", "PixelSpacing", "SliceThickness",
          "FrameOfReferenceUID", "Rows", "Columns"]


def scan(root):
    files, skipped, series, seen = 0, 0, set(), 0
    for dirpath, _, names in os.walk(root):
        for name in names:
            try:
                ds = pydicom.dcmread(os.path.join(dirpath, name), stop_before_pixels=True)
            except pydicom.errors.InvalidDicomError:
                skipped += 1
                continue
            files += 1
            series.add(ds.SeriesInstanceUID)
            for f in FIELDS:
                if ds.get(f) is not None:
                    seen += 1
    print("dicomscan.py: %d files, %d series, %d other files skipped, %d fields" % (files, len(series), skipped, seen))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("dir")
    a = ap.parse_args()
    for _ in range(a.repeat):
        scan(a.dir)


if __name__ == "__main__":
    main()
