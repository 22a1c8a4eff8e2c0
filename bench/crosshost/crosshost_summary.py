"""The tables of bench/crosshost/crosshost_bench.sh's results (Markdown):
  links:  per delay, the TCP round trip and one stream's rate between two
          worker hosts, and how late netdelay released packets;
  main:   per model and delay, Ringleader and PyTorch DDP (samples/s, tokens/s
          for the GPT), Ringleader / DDP, each against itself at 0 ms, and
          the step time each added over 0 ms in one-way delays (how many
          times a step waits for the wire);
  axes:   per model and delay, each Ringleader variant against the default at
          that delay, against the default at 0 ms and against DDP at that
          delay, with rank 0's buckets and all-reduce wait per step.
Every ratio is taken within one repeat (jobs minutes apart on one machine),
then the median over repeats is shown with the range; rates are medians
over repeats. Runs
that failed (no rate) are listed and left out.
    crosshost_summary.py RESULTS.jsonl
"""
import collections
import json
import statistics
import sys


def rate(r):
    return r.get("tokens_per_s") if r.get("model") == "gpt" else r.get("samples_per_s")


def median(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def fmt(x, digits=0):
    return "-" if x is None else f"{x:,.{digits}f}"


def load(path):
    runs, probes, delays = [], collections.defaultdict(list), collections.defaultdict(list)
    for line in open(path):
        r = json.loads(line)
        if "rtt_probe" in r or "link_probe" in r:
            kind, p = next(iter(r.items()))
            probes[(kind, str(p["delay_ms"]))].append(p)
        elif "netdelay" in r:
            delays[r["netdelay"]["delay_ms"]].append(r["netdelay"])
        elif "impl" in r:
            runs.append(r)
    return runs, probes, delays


NO_LINE = -1.0  # delay "none": the hosts' links without the delay line


def delay_of(r):
    return NO_LINE if r["delay_ms"] == "none" else float(r["delay_ms"])


def label(d):
    return "none (no delay line)" if d == NO_LINE else f"{d:g} ms"


def delay_key(d):
    return (1, 0.0) if d == "raw" else (0, float(d))


def links_table(probes, delays):
    print("| one-way delay | TCP round trip p50 (ms) | min (ms) | one stream (Mbit/s) "
          "| netdelay late, mean / max (us) | released > 1 ms late | dropped |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for d in sorted({k[1] for k in probes}, key=delay_key):
        rtt, tcp = probes.get(("rtt_probe", d), []), probes.get(("link_probe", d), [])
        nd = [] if d == "raw" else delays.get(float(d), [])
        late = "-" if not nd else (f"{median(n['mean_lateness_us'] for n in nd):.0f} / "
                                   f"{max(n['max_lateness_us'] for n in nd):,.0f}")
        released = sum(n["released"] for n in nd)
        over = "-" if not released else \
            f"{100 * sum(n.get('late_over_1ms', 0) for n in nd) / released:.2f}%"
        label = "none (no delay line)" if d == "raw" else f"{d} ms"
        print(f"| {label} | {fmt(median(p['p50_ms'] for p in rtt), 2)} "
              f"| {fmt(median(p['min_ms'] for p in rtt), 2)} "
              f"| {fmt(median(p['mbit_per_s'] for p in tcp))} | {late} | {over} "
              f"| {sum(n['dropped'] for n in nd) if nd else '-'} |")


def index(runs):
    """{(model, delay, impl or variant, repeat): rate} of the runs that gave one."""
    by, failed = {}, []
    for r in runs:
        name = "ddp" if r["impl"].startswith("pytorch-ddp") else r.get("variant", "default")
        key = (r["model"], delay_of(r), name, r["repeat"])
        if r.get("failed") or not rate(r):
            failed.append(key)
            continue
        by[key] = r
    return by, failed


def ratios(by, a, b):
    """Per repeat: rate of key a (without repeat) over key b's."""
    out = []
    for rep in sorted({k[3] for k in by}):
        x, y = by.get(a + (rep,)), by.get(b + (rep,))
        if x and y:
            out.append(rate(x) / rate(y))
    return out


def ratio(by, a, b):
    """The median over repeats of ratios(by, a, b), with their range when
    there are several: "0.95 (0.90..1.01)"."""
    if a == b:
        return "1"
    rs = ratios(by, a, b)
    if not rs:
        return "-"
    text = f"{median(rs):.2f}"
    return text if len(rs) == 1 else f"{text} ({min(rs):.2f}..{max(rs):.2f})"


def rates(by, key):
    return median(rate(r) for k, r in by.items() if k[:3] == key)


def step_ms(r):
    return 1000.0 * r["global_batch"] / r["samples_per_s"]


def added_delays(by, key, zero):
    """Per repeat: (step time at key's delay - at 0 ms) / the one-way delay,
    i.e. how many one-way delays each step waits; their median."""
    out = []
    for rep in {k[3] for k in by}:
        x, y = by.get(key + (rep,)), by.get(zero + (rep,))
        if x and y and key[1] > 0:
            out.append((step_ms(x) - step_ms(y)) / key[1])
    return median(out)


def main_table(by, models, delays):
    print("| model | one-way delay | Ringleader | PyTorch DDP | Ringleader / DDP "
          "| Ringleader vs 0 ms | DDP vs 0 ms | delays / step, Ringleader | DDP |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for m in models:
        unit = "tokens/s" if m == "gpt" else "samples/s"
        for d in delays:
            rl, ddp = (m, d, "default"), (m, d, "ddp")
            rl0, ddp0 = (m, 0.0, "default"), (m, 0.0, "ddp")
            print(f"| {m} ({unit}) | {label(d)} | {fmt(rates(by, rl))} | {fmt(rates(by, ddp))} "
                  f"| {ratio(by, rl, ddp)} | {ratio(by, rl, rl0)} "
                  f"| {ratio(by, ddp, ddp0)} | {fmt(added_delays(by, rl, rl0), 1)} "
                  f"| {fmt(added_delays(by, ddp, ddp0), 1)} |")


def timeline(by, key, field):
    return median(r.get(field) for k, r in by.items() if k[:3] == key)


def axes_table(by, models, delays):
    print("| model | one-way delay | Ringleader variant | rate | vs default | vs 0 ms default "
          "| vs DDP | buckets / step | all-reduce wait (ms / step) |")
    print("|---|---:|---|---:|---:|---:|---:|---:|---:|")
    for m in models:
        for d in delays:
            variants = sorted({k[2] for k in by if k[:2] == (m, d) and k[2] != "ddp"},
                              key=lambda v: (v != "default", v))
            if variants == ["default"]:
                continue
            for v in variants:
                key = (m, d, v)
                print(f"| {m} | {label(d)} | {v} | {fmt(rates(by, key))} "
                      f"| {ratio(by, key, (m, d, 'default'))} "
                      f"| {ratio(by, key, (m, 0.0, 'default'))} "
                      f"| {ratio(by, key, (m, d, 'ddp'))} "
                      f"| {fmt(timeline(by, key, 'buckets_per_step'))} "
                      f"| {fmt(timeline(by, key, 'allreduce_wait_ms'), 1)} |")


def main(path):
    runs, probes, delays = load(path)
    by, failed = index(runs)
    models = list(dict.fromkeys(r["model"] for r in runs))
    run_delays = sorted({delay_of(r) for r in runs})
    print("Links (from worker 1 to worker 2):\n")
    links_table(probes, delays)
    print("\nRingleader and PyTorch DDP (medians over repeats; ratios within a repeat):\n")
    main_table(by, models, run_delays)
    print("\nWhat wins throughput back (Ringleader, one knob at a time):\n")
    axes_table(by, models, run_delays)
    if failed:
        print("\nFailed runs (left out): " +
              ", ".join(f"{m} {label(d)} {v} repeat {rep}" for m, d, v, rep in failed))


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
