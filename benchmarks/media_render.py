"""What turning a large image output into the saved gallery costs, and what it stores.

    .venv/bin/python benchmarks/media_render.py [--quick]

The output holds a 4 MB PNG as base64 (random pixels: it does not compress, as a
photograph barely does). Measured, median of the rounds:

1. ``find`` + ``gallery_html`` (detection, thumbnail, HTML) against the baseline of
   ``base64.b64decode`` of the blob alone: the least any display of it must do. The
   issue's goal is the picture in the panel within 1 s of the job's end; this is the
   part of that second the media code takes.
2. What the saved notebook grows by: the gallery's stored bytes, against the blob.
"""

from __future__ import annotations

import argparse
import base64
import io
import random
import statistics
import time
from collections.abc import Callable

from PIL import Image

from nbext.media import find, gallery_html


def four_mb_png() -> bytes:
    rng = random.Random(4)
    out = io.BytesIO()
    Image.frombytes("RGB", (1200, 1200), rng.randbytes(1200 * 1200 * 3)).save(out, "PNG")
    return out.getvalue()


def median_seconds(fn: Callable[[], object], rounds: int) -> float:
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="3 rounds instead of 15")
    rounds = 3 if parser.parse_args().quick else 15
    blob = four_mb_png()
    output = {"images": [base64.b64encode(blob).decode("ascii")], "seed": 1}
    baseline = median_seconds(lambda: base64.b64decode(output["images"][0]), rounds)
    gallery = median_seconds(lambda: gallery_html(find(output)), rounds)
    rendered = gallery_html(find(output))
    print(f"PNG: {len(blob):,} bytes ({len(output['images'][0]):,} as base64), {rounds} rounds")
    print(f"1. find + gallery_html: {gallery * 1000:.0f} ms (median)")
    print(f"   baseline b64decode:  {baseline * 1000:.1f} ms; ratio {gallery / baseline:.1f}x")
    print(f"2. stored in the notebook: {rendered.stored_bytes:,} bytes as {rendered.placements}")
    print(f"   = {rendered.stored_bytes / len(output['images'][0]):.1%} of the base64 blob")


if __name__ == "__main__":
    main()
