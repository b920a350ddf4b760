#!/usr/bin/env python3
"""tests/windows.py - events for the window tests, and what tumbling
windows over them must give, computed the plain way, one record after
another, as tests/cli_windows.sh's reference.

  windows.py events N LATE > events.jsonl   N events 0.1 s apart, times
      out of order by up to 40 s, written three ways (RFC 3339 in UTC or
      with an offset, epoch seconds as an integer or a float); with LATE=1
      every 997th is an hour behind
  windows.py expect OP WINDOW_S LATENESS_S < events.jsonl   the
      [key, value, start, end] of every window of aggregation OP (count,
      sum, min, max, mean, distinct) by .u of .b (distinct: of .ip), to
      stdout, and the number of late records to stderr
"""
import datetime
import json
import random
import sys

BASE = 1795802400000  # 2026-11-27T18:00:00Z, in milliseconds


def rfc3339(ms, offset_min=0):
    t = datetime.datetime.fromtimestamp(ms // 1000, datetime.timezone.utc)
    t += datetime.timedelta(minutes=offset_min)
    text = t.strftime("%Y-%m-%dT%H:%M:%S")
    if ms % 1000:
        text += ".%03d" % (ms % 1000)
    if offset_min == 0:
        return text + "Z"
    sign = "+" if offset_min > 0 else "-"
    return text + "%s%02d:%02d" % (sign, abs(offset_min) // 60, abs(offset_min) % 60)


def events(n, late):
    random.seed(7)
    for i in range(n):
        ms = BASE + i * 100 + random.randint(-40000, 40000)
        if late and i % 997 == 500:
            ms -= 3600000
        form = i % 4
        if form == 0:
            t = rfc3339(ms)
        elif form == 1:
            t = rfc3339(ms, random.choice([60, -330, 345]))
        elif form == 2:
            t = ms / 1000
        else:
            t = ms // 1000
            ms = t * 1000
        b = i % 50 - 20 if i % 10 != 3 else (i % 50) + 0.5
        print(json.dumps({"u": "user%d" % (i * 7919 % 31), "t": t, "b": b, "ip": "10.0.0.%d" % (i % 7)}))


def millis(t):
    if isinstance(t, str):
        at = datetime.datetime.fromisoformat(t.replace("Z", "+00:00"))
        epoch = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)
        return (at - epoch) // datetime.timedelta(milliseconds=1)
    if isinstance(t, int):
        return t * 1000
    return round(t * 1e6) // 1000


def expect(op, window_s, lateness_s):
    window, lateness = window_s * 1000, lateness_s * 1000
    latest = None
    late = 0
    state = {}
    for line in sys.stdin:
        r = json.loads(line)
        ms = millis(r["t"])
        start = ms - ms % window
        if latest is not None and start + window <= latest - lateness:
            late += 1
            continue
        latest = ms if latest is None else max(latest, ms)
        state.setdefault((r["u"], start), []).append(r["ip"] if op == "distinct" else r["b"])
    for (key, start), values in state.items():
        if op == "count":
            v = len(values)
        elif op == "sum":
            v = values[0]
            for x in values[1:]:
                v += x
        elif op == "min":
            v = min(values)
        elif op == "max":
            v = max(values)
        elif op == "mean":
            s = 0.0
            for x in values:
                s += x
            v = s / len(values)
        else:
            v = len(set(values))
        print(json.dumps([key, v, rfc3339(start), rfc3339(start + window)]))
    print(late, file=sys.stderr)


if __name__ == "__main__":
    if sys.argv[1] == "events":
        events(int(sys.argv[2]), sys.argv[3] == "1")
    else:
        expect(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
