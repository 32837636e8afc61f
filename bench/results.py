#!/usr/bin/env python3
"""Reads fio's and iosteer's JSON reports and prints the benches' tables.

Used by vs-fio.sh and vs-kernel.sh (standard library only):

  results.py fio FILE       one line per class (read, write) with I/O:
  results.py iosteer FILE     CLASS IOPS MB/s P50_US P99_US P999_US
  results.py vs-fio TSV     medians and per-run ratios iosteer/fio
  results.py vs-kernel TSV  read p50/p99/p99.9 and MB/s, write MB/s per setup
  results.py steer-real TSV steer and static limits against reads alone, per
                            run, and issue 25's verdicts (steer-real.sh)

fio's latency is its `lat` (submission to completion, `--lat_percentiles=1`),
and its classes are summed over jobs (`--group_reporting`). iosteer's is from
the moment its job issued the request (scheduler queue plus device) to the
moment the loop reaped it. MB/s are 10^6 bytes per second in both.

The TSV files hold the scripts' results, one line per run and class:
  SETUP RUN TOOL CLASS IOPS MBPS P50_US P99_US P999_US CPU_S WALL_S
(CPU_S: user plus system seconds of the tool's process and children, WALL_S:
its wall time, both from bash's `time`, startup included).
"""

import json
import statistics
import sys


def fio_rows(path):
    with open(path) as f:
        text = f.read()
    # fio may print notes before the JSON document.
    report = json.loads(text[text.index("{"):])
    rows = []
    for cls in ("read", "write"):
        sections = [j[cls] for j in report["jobs"] if j[cls]["total_ios"] > 0]
        if not sections:
            continue
        # With --group_reporting there is one job; otherwise take the
        # percentiles of the job that did most of this class's I/O.
        main = max(sections, key=lambda s: s["total_ios"])
        pct = main["lat_ns"].get("percentile") or main["clat_ns"]["percentile"]

        def p(key):
            return pct[key] / 1e3

        rows.append(
            (
                cls,
                sum(s["iops"] for s in sections),
                sum(s["bw_bytes"] for s in sections) / 1e6,
                p("50.000000"),
                p("99.000000"),
                p("99.900000"),
            )
        )
    return rows


def iosteer_rows(path):
    with open(path) as f:
        report = json.load(f)
    run = report["runs"][0]
    # `job`: the whole workload, from the first job's start to the last one's
    # end (as fio divides by a job's runtime).
    phase = next(p for p in run["phases"] if p["name"] == "job")
    rows = []
    for cls in ("read", "write"):
        c = phase[cls]
        if c["ops"] == 0:
            continue
        lat = c["lat_us"]
        rows.append((cls, c["iops"], c["mbps"], lat["p50"], lat["p99"], lat["p999"]))
    return rows


def print_rows(rows):
    for cls, iops, mbps, p50, p99, p999 in rows:
        print(f"{cls}\t{iops:.1f}\t{mbps:.2f}\t{p50:.1f}\t{p99:.1f}\t{p999:.1f}")


def load(path):
    out = []
    with open(path) as f:
        for line in f:
            parts = line.split()
            if len(parts) != 11:
                continue
            setup, run, tool, cls = parts[:4]
            nums = [float(x) for x in parts[4:]]
            out.append((setup, int(run), tool, cls, *nums))
    return out


def median(xs):
    return statistics.median(xs) if xs else float("nan")


def vs_fio(path):
    rows = load(path)
    # (setup, run, tool, cls) -> (iops, mbps, p50, p99, p999, cpu)
    by = {(r[0], r[1], r[2], r[3]): r[4:] for r in rows}
    setups = list(dict.fromkeys(r[0] for r in rows))
    verdicts = []
    for setup in setups:
        runs = sorted({r[1] for r in rows if r[0] == setup})
        classes = [c for c in ("read", "write") if any(r[0] == setup and r[3] == c for r in rows)]
        print(f"\n{setup}: {len(runs)} run(s), medians; ratio = median of the per-run ratios iosteer/fio")
        print(f"  {'':<20}{'fio':>12}{'iosteer':>12}{'iosteer/fio':>13}   per-run ratios")
        for cls in classes:
            for name, i in (("IOPS", 0), ("p50 us", 2), ("p99 us", 3)):
                f_vals = [by[(setup, n, "fio", cls)][i] for n in runs if (setup, n, "fio", cls) in by]
                s_vals = [by[(setup, n, "iosteer", cls)][i] for n in runs if (setup, n, "iosteer", cls) in by]
                ratios = [
                    by[(setup, n, "iosteer", cls)][i] / by[(setup, n, "fio", cls)][i]
                    for n in runs
                    if (setup, n, "fio", cls) in by
                    and (setup, n, "iosteer", cls) in by
                    and by[(setup, n, "fio", cls)][i] > 0
                ]
                r = median(ratios)
                listed = ", ".join(f"{x:.3f}" for x in ratios)
                print(f"  {cls + ' ' + name:<20}{median(f_vals):>12.1f}{median(s_vals):>12.1f}{r:>13.3f}   {listed}")
                if name == "IOPS":
                    verdicts.append((setup, cls, "IOPS >= 95% of fio", r >= 0.95, r))
                if name == "p50 us":
                    # One-sided: a p50 below fio's is not a miss.
                    verdicts.append((setup, cls, "p50 at most 10% above fio's", r <= 1.10, r))
        # CPU per I/O: the cost of each tool's submission and completion path
        # (wall time includes startup, so this slightly overstates it).
        for tool in ("fio", "iosteer"):
            busy, per_io = [], []
            for n in runs:
                keys = [(setup, n, tool, c) for c in classes if (setup, n, tool, c) in by]
                if not keys:
                    continue
                cpu, wall = by[keys[0]][5], by[keys[0]][6]
                ios = sum(by[k][0] for k in keys) * wall
                busy.append(100 * cpu / wall)
                per_io.append(1e6 * cpu / ios if ios else float("nan"))
            if busy:
                print(
                    f"  {tool + ' CPU':<20}{median(busy):>11.0f}% of a core, {median(per_io):.1f} us per I/O"
                    + "   runs: " + ", ".join(f"{x:.1f}" for x in per_io)
                )
    print("\nGoal of issue #7 (iosteer >= 95% of fio's IOPS, p50 at most 10% above fio's):")
    for setup, cls, goal, ok, r in verdicts:
        print(f"  {setup} {cls}: {goal}: {'met' if ok else 'NOT met'} (ratio {r:.3f})")


def vs_kernel(path):
    rows = load(path)
    setups = list(dict.fromkeys(r[0] for r in rows))
    width = max([len(s) for s in setups] + [5]) + 2
    print(f"  {'setup':<{width}}{'runs':>5}{'read p50 ms':>12}{'p99 ms':>9}{'p99.9 ms':>10}{'read MB/s':>11}{'write MB/s':>11}")
    p99 = {}
    for setup in setups:
        mine = [r for r in rows if r[0] == setup]
        runs = sorted({r[1] for r in mine})
        reads = [r for r in mine if r[3] == "read"]
        writes = [r for r in mine if r[3] == "write"]

        def med(rs, i):
            return median([r[i] for r in rs])

        w = f"{med(writes, 5):>11.1f}" if writes else f"{'-':>11}"
        print(
            f"  {setup:<{width}}{len(runs):>5}{med(reads, 6) / 1e3:>12.3f}{med(reads, 7) / 1e3:>9.3f}"
            f"{med(reads, 8) / 1e3:>10.3f}{med(reads, 5):>11.1f}{w}"
        )
        p99[setup] = med(reads, 7)
    # Issue #7's goal, against iosteer's own reads-alone run (same loop,
    # same kernel scheduler): read p99 under the writer within 2x of it.
    alone = [s for s in setups if s.startswith("iosteer:reads-alone")]
    if alone and p99.get(alone[0]):
        base = p99[alone[0]]
        print(f"\nRead p99 against iosteer's reads alone ({base / 1e3:.3f} ms); goal for steer: at most 2x")
        for setup in setups:
            if setup.startswith("iosteer:") and setup != alone[0]:
                ratio = p99[setup] / base
                verdict = ""
                if setup.startswith("iosteer:steer"):
                    verdict = " (goal met)" if ratio <= 2.0 else " (goal NOT met)"
                print(f"  {setup}: {ratio:.2f}x{verdict}")


def steer_real(path):
    # steer-real.sh's TSV: LAYOUT RUN SETUP CLASS ..., read by `load` as
    # (layout, run, setup, class, iops, mbps, p50, p99, p999, cpu, wall).
    rows = load(path)
    fig = {(r[0], r[1], r[2], r[3]): r for r in rows}
    for layout in dict.fromkeys(r[0] for r in rows):
        runs = sorted({r[1] for r in rows if r[0] == layout})
        setups = [s for s in dict.fromkeys(r[2] for r in rows if r[0] == layout) if s != "alone"]

        def ratio(setup, run):
            alone, mine = fig.get((layout, run, "alone", "read")), fig.get((layout, run, setup, "read"))
            return mine[7] / alone[7] if alone and mine and alone[7] > 0 else float("nan")

        def written(setup, run):
            w = fig.get((layout, run, setup, "write"))
            return w[5] if w else 0.0

        print(f"\n{layout}: read p99 over the same run's reads alone, and write MB/s")
        print("  run  alone p99 ms" + "".join(f"{s:>22}" for s in setups))
        for run in runs:
            alone = fig.get((layout, run, "alone", "read"))
            cells = "".join(f"{ratio(s, run):>11.2f}x{written(s, run):>9.1f}  " for s in setups)
            print(f"  {run:>3}{alone[7] / 1e3 if alone else float('nan'):>13.3f}{cells}")
        held = {s: all(ratio(s, run) <= 2.0 for run in runs) for s in setups}
        rates = sorted(written("steer", run) for run in runs)
        statics = [s for s in setups if s.startswith("static:") and held[s]]
        best = max(statics, key=lambda s: median([written(s, run) for run in runs]), default=None)
        steer_held = sum(ratio("steer", run) <= 2.0 for run in runs)
        print(f"  steer held p99<=2x in {steer_held} of {len(runs)} runs")
        if rates:
            slowest, mid = rates[0], median(rates)
            print(
                f"  steer wrote {slowest:.1f} to {rates[-1]:.1f} MB/s, median {mid:.1f}: slowest/median "
                f"{slowest / mid if mid else float('nan'):.2f} (issue 25: at least 0.5)"
            )
        if best:
            b = median([written(best, run) for run in runs])
            print(
                f"  best static limit holding 2x in every run: {best} ({b:.1f} MB/s median); "
                f"steer's slowest run {'at least' if rates and rates[0] >= b else 'BELOW'} it"
            )
        else:
            print("  no static limit held 2x in every run")


def main(argv):
    if len(argv) != 3:
        sys.exit(__doc__)
    mode, path = argv[1], argv[2]
    if mode == "fio":
        print_rows(fio_rows(path))
    elif mode == "iosteer":
        print_rows(iosteer_rows(path))
    elif mode == "vs-fio":
        vs_fio(path)
    elif mode == "vs-kernel":
        vs_kernel(path)
    elif mode == "steer-real":
        steer_real(path)
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv)
