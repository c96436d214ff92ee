#!/usr/bin/python3
"""Reads a PNG with the standard library alone (zlib) and prints what a test needs to tell a
rendered page from a blank one: {"width", "height", "colours" (distinct RGB values), "ink"
(the share of pixels that are not white)}.

    png_summary.py FILE.png
"""
import json
import struct
import sys
import zlib


def paeth(a, b, c):
    p = a + b - c
    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
    if pa <= pb and pa <= pc:
        return a
    return b if pb <= pc else c


def rows(data, width, height, channels):
    """The unfiltered rows of 8-bit samples (PNG filters 0-4)."""
    stride = width * channels
    previous = bytearray(stride)
    pos = 0
    for _ in range(height):
        kind = data[pos]
        line = bytearray(data[pos + 1:pos + 1 + stride])
        pos += 1 + stride
        for i in range(stride):
            left = line[i - channels] if i >= channels else 0
            up = previous[i]
            corner = previous[i - channels] if i >= channels else 0
            if kind == 1:
                line[i] = (line[i] + left) & 255
            elif kind == 2:
                line[i] = (line[i] + up) & 255
            elif kind == 3:
                line[i] = (line[i] + (left + up) // 2) & 255
            elif kind == 4:
                line[i] = (line[i] + paeth(left, up, corner)) & 255
        yield line
        previous = line


def main(path):
    data = open(path, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, header = 8, b"", None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    width, height, depth, colour_type, _, _, interlace = header
    assert depth == 8 and colour_type in (2, 6) and interlace == 0, header
    channels = 3 if colour_type == 2 else 4
    colours, ink = set(), 0
    for line in rows(zlib.decompress(idat), width, height, channels):
        for x in range(0, len(line), channels):
            rgb = bytes(line[x:x + 3])
            colours.add(rgb)
            ink += rgb != b"\xff\xff\xff"
    print(json.dumps({"width": width, "height": height, "colours": len(colours),
                      "ink": ink / (width * height)}))


if __name__ == "__main__":
    main(sys.argv[1])
