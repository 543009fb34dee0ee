"""Ratios to cuBLAS(Lt) per problem and build over the rounds of a log, their medians, and
the geomean of the medians per family: python3 compare.py run2-two-orders/raster2.log
(builds g8 and n8) or run3-committed/timing.log (host-g8 and host-new)."""
import collections
import math
import re
import sys

ratios = collections.defaultdict(list)
builds, problems, current = [], [], None
for line in open(sys.argv[1]):
    m = re.match(r"== r\d+ (\S+) (.*)", line)
    if m:
        current = (m.group(1), m.group(2).strip())
        builds += [] if current[0] in builds else [current[0]]
        continue
    m = re.match(r"\| (\S+)[^|]*\| GPU \| \S+ \| [\d.]+ \| [\d.]+ \| ([\d.]+)", line)
    if m and current and not m.group(1).startswith("cublas"):
        key = (current[1], m.group(1))
        problems += [] if key in problems else [key]
        ratios[(current[0],) + key].append(float(m.group(2)))


def median(xs):
    xs, h = sorted(xs), len(xs) // 2
    return (xs[h] if len(xs) % 2 else (xs[h - 1] + xs[h]) / 2) if xs else float("nan")


families = collections.defaultdict(lambda: collections.defaultdict(list))
for problem, variant in problems:
    cells = []
    for b in builds:
        xs = ratios[(b, problem, variant)]
        cells.append("%s %s (%.3f)" % (b, "/".join("%.3f" % x for x in xs), median(xs)))
        if variant.startswith("auto") and xs:
            families[problem.split()[0]][b].append(median(xs))
    print("%-28s %-26s %s" % (problem, variant, "  ".join(cells)))
for family, per_build in families.items():
    print(family, "geomean of medians:", "  ".join(
        "%s %.3f" % (b, math.exp(sum(map(math.log, v)) / len(v))) for b, v in per_build.items()))
