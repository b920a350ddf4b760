#!/usr/bin/env python3
"""tests/promtext.py - checks a text in the Prometheus exposition format
(version 0.0.4), as weir run --metrics serves it.

    python3 tests/promtext.py FILE

Every line a HELP, a TYPE or a sample; names and label names as the
format allows them, label values quoted with only its three escapes;
one TYPE per family, before its samples, which come together; a
histogram's buckets in increasing order of le, cumulative, the +Inf one
equal to _count, and a _sum.  Prints what is wrong, with the line's
number, and exits 1; else 0.  A second opinion, where promtool is
installed, comes from 'promtool check metrics'."""
import math
import re
import sys

NAME = r"[a-zA-Z_:][a-zA-Z0-9_:]*"
LABEL = r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\\n]|\\[\\"n])*)"'
SAMPLE = re.compile(r"^(?P<name>" + NAME + r")(?:\{(?P<labels>(?:" + LABEL + r")(?:," + LABEL + r")*)?\})?"
                    r" (?P<value>\S+)(?: -?\d+)?$")
TYPES = {"counter", "gauge", "histogram", "summary", "untyped"}


def value(text):
    if text in ("+Inf", "Inf"):
        return math.inf
    if text == "-Inf":
        return -math.inf
    return float(text)  # NaN too


def family(name, types):
    for suffix in ("_bucket", "_sum", "_count"):
        base = name[: -len(suffix)]
        if name.endswith(suffix) and types.get(base) == "histogram":
            return base
    return name


def check(lines):
    errors, types, seen, done, current = [], {}, set(), set(), None
    hist = {}  # family -> {labels without le: [(le, count)]}, and sums, counts
    for n, line in enumerate(lines, 1):
        if not line:
            continue
        if line.startswith("#"):
            m = re.match(r"^# (HELP|TYPE) (" + NAME + r") (.*)$", line)
            if not m:
                if not re.match(r"^# (HELP|TYPE)", line):
                    continue  # a comment
                errors.append("%d: a malformed %s line" % (n, line.split()[1]))
                continue
            kind, name, rest = m.groups()
            if kind == "TYPE":
                if rest not in TYPES:
                    errors.append("%d: '%s' is no type" % (n, rest))
                if name in types:
                    errors.append("%d: a second TYPE for %s" % (n, name))
                if name in seen:
                    errors.append("%d: the TYPE of %s after its samples" % (n, name))
                types[name] = rest
            continue
        m = SAMPLE.match(line)
        if not m:
            errors.append("%d: not a sample: %s" % (n, line))
            continue
        name, labels, val = m.group("name"), m.group("labels") or "", m.group("value")
        try:
            v = value(val)
        except ValueError:
            errors.append("%d: '%s' is no number" % (n, val))
            continue
        fam = family(name, types)
        if fam != current:
            if fam in done:
                errors.append("%d: the samples of %s are not together" % (n, fam))
            if current:
                done.add(current)
            current = fam
        seen.add(fam)
        pairs = re.findall(LABEL, labels)
        keys = [k for k, _ in pairs]
        if len(keys) != len(set(keys)):
            errors.append("%d: a label twice" % n)
        if types.get(fam) == "counter" and (v < 0 or not name.endswith("_total")):
            errors.append("%d: a counter named %s of value %s" % (n, name, val))
        if types.get(fam) == "histogram":
            rest = tuple(sorted((k, x) for k, x in pairs if k != "le"))
            h = hist.setdefault(fam, {}).setdefault(rest, {"buckets": [], "sum": None, "count": None})
            if name.endswith("_bucket"):
                le = dict(pairs).get("le")
                if le is None:
                    errors.append("%d: a bucket without le" % n)
                    continue
                h["buckets"].append((value(le), v, n))
            elif name.endswith("_sum"):
                h["sum"] = v
            elif name.endswith("_count"):
                h["count"] = v
    for fam, series in hist.items():
        for rest, h in series.items():
            b = h["buckets"]
            if not b or b[-1][0] != math.inf:
                errors.append("%s: no +Inf bucket" % fam)
                continue
            for (le0, c0, _), (le1, c1, n1) in zip(b, b[1:]):
                if le1 <= le0:
                    errors.append("%d: le not increasing" % n1)
                if c1 < c0:
                    errors.append("%d: buckets not cumulative" % n1)
            if h["count"] != b[-1][1]:
                errors.append("%s: _count %s is not the +Inf bucket's %s" % (fam, h["count"], b[-1][1]))
            if h["sum"] is None:
                errors.append("%s: no _sum" % fam)
    return errors


if __name__ == "__main__":
    with open(sys.argv[1], encoding="utf-8") as f:
        text = f.read()
    problems = check(text.split("\n")) if text.endswith("\n") or not text else ["the text does not end with a newline"]
    for p in problems:
        print("promtext: %s: %s" % (sys.argv[1], p))
    sys.exit(1 if problems else 0)
