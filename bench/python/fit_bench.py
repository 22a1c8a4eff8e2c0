"""ringleader.fit's cost beside ringctl, and its data writing beside np.save.

    /usr/bin/python3 bench/python/fit_bench.py [--repeats 3] [--bin-dir DIR]

Part 1, the job. One coordinator and 2 workers (a LocalCluster started once;
its start is timed apart, not in either side), then per repeat, in turn:
  fit    ringleader.fit(ResNet, (x, y), test=..., ...) against that cluster,
         timed from the call to its Result, the data written into a fresh
         data_dir (result.timings says how long the writing took);
  ringctl  `ringctl submit --file=SPEC --watch` of the spec fit submitted,
         its prepared files, exports to fresh paths (the process, timed);
  reuse  fit again with the same data: only its fingerprint is taken.
fit's overhead beyond writing the data is fit - write - ringctl, given as a
share of ringctl's time, within each repeat; the median is reported. Both
jobs' own times also vary (a worker takes a job at its next heartbeat, up to
a second later), so each side's time outside its job as the coordinator
recorded it (submit to final state) is reported too, with fit's extra as a
share of the job: the same figure without the job's noise.

Part 2, writing. The ResNet's arrays (60000 x 3x32x32 uint8 and int64
labels), in turn: ringleader's writer (hash, then write, into a fresh
directory) and np.save of the same two arrays; the ratio per repeat, and its
median (in turn, the order swapped every other repeat). A Dataset of
(tensor, int) tuples (read item by item) for reference.

Prints a table and writes bench/results/fit.json. Nothing here asserts a
time: the machine is shared and noisy; compare the ratios.
"""
import argparse
import json
import os
import pathlib
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

REPO = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "python"))
sys.path.insert(0, str(REPO / "examples" / "resnet"))

import numpy as np  # noqa: E402
import torch  # noqa: E402
from google.protobuf import json_format  # noqa: E402

import ringleader  # noqa: E402
from ringleader import binaries, data, store  # noqa: E402
from model import build  # noqa: E402  (examples/resnet/model.py)
from prepare import channel_stats, load_split  # noqa: E402

FASHION = "/usr/share/datasets/fashion-mnist"


def job_side_by_side(args, cluster, scratch: pathlib.Path) -> list:
    x, y = load_split(FASHION, "train", args.train)
    tx, ty = load_split(FASHION, "t10k", args.test)
    mean, std = channel_stats(x)
    ringctl = binaries.find(["ringctl"], args.bin_dir)["ringctl"]
    rows = []
    for r in range(args.repeats):
        kwargs = dict(test=(tx, ty), optimizer="adam", lr=1e-3, epochs=1,
                      batch_size=64, workers=2, seed=42, progress=False,
                      transform={"scale": 1 / 255, "mean": mean, "std": std},
                      client=cluster.address)
        data_dir = scratch / f"fit-{r}"
        start = time.monotonic()
        result = ringleader.fit(build([16, 32, 64], [1, 1, 1], 42), (x, y),
                                data_dir=data_dir, **kwargs)
        fit_s = time.monotonic() - start
        spec = ringleader.JobSpec()
        spec.CopyFrom(result.job.spec)
        spec.name = "ringctl-side"
        spec.export.torchscript_path = str(data_dir / f"ringctl-{r}.pt")
        spec.export.safetensors_path = str(data_dir / f"ringctl-{r}.safetensors")
        spec_file = data_dir / "spec.json"
        spec_file.write_text(json_format.MessageToJson(spec))
        start = time.monotonic()
        out = subprocess.run([ringctl, f"--coordinator={cluster.address}",
                              "submit", f"--file={spec_file}", "--watch"],
                             check=True, capture_output=True, text=True)
        ringctl_s = time.monotonic() - start
        with cluster.client() as c:
            ringctl_job = c.get(out.stdout.split()[0])
        start = time.monotonic()
        again = ringleader.fit(build([16, 32, 64], [1, 1, 1], 42), (x, y),
                               data_dir=data_dir, **kwargs)
        reuse_s = time.monotonic() - start
        row = {"repeat": r, "fit_s": fit_s, "ringctl_s": ringctl_s,
               "reuse_s": reuse_s, "fit_timings": result.timings,
               "reuse_timings": again.timings,
               "fit_job_s": job_seconds(result.job),
               "ringctl_job_s": job_seconds(ringctl_job),
               "accuracy": result.final_metrics.get("accuracy")}
        row["overhead_s"] = fit_s - result.timings["write"] - ringctl_s
        row["overhead_share"] = row["overhead_s"] / ringctl_s
        row["reuse_overhead_share"] = (reuse_s - ringctl_s) / ringctl_s
        # What each side spends outside the job as the coordinator timed it
        # (submit to final): free of the job's own noise, such as the wait
        # for a worker's next heartbeat to carry the assignment.
        row["fit_outside_s"] = fit_s - result.timings["write"] - row["fit_job_s"]
        row["ringctl_outside_s"] = ringctl_s - row["ringctl_job_s"]
        row["outside_share"] = (row["fit_outside_s"] - row["ringctl_outside_s"]
                                ) / row["ringctl_job_s"]
        rows.append(row)
        print(f"repeat {r}: fit {fit_s:.2f}s (write {result.timings['write']:.2f}s)"
              f", ringctl {ringctl_s:.2f}s, fit again (reuse) {reuse_s:.2f}s: "
              f"overhead {100 * row['overhead_share']:+.1f}%; outside the job: fit "
              f"{row['fit_outside_s']:.3f}s, ringctl {row['ringctl_outside_s']:.3f}s "
              f"({100 * row['outside_share']:+.2f}% of the job)", flush=True)
        shutil.rmtree(data_dir, ignore_errors=True)
    return rows


def job_seconds(job) -> float:
    """Submit to final state, as the coordinator recorded it."""
    return (job.update_time_ms - job.create_time_ms) / 1000.0


class Items(torch.utils.data.Dataset):
    def __init__(self, x, y):
        self.x, self.y = x, y

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        return torch.from_numpy(self.x[i]), int(self.y[i])


def writing_side_by_side(args, scratch: pathlib.Path) -> list:
    x, y = load_split(FASHION, "train", 0)
    rows = []
    for r in range(args.repeats):
        d = scratch / f"write-{r}"
        (d / "np").mkdir(parents=True)
        # In turn, and in the other order every other repeat: the page
        # cache's write-back of one side's bytes must not fall on the other.
        sides = [("ours", lambda: store.write(
            data.source((x, y), "train", "classification"), d / "rl",
            "train", progress=False)),
            ("np", lambda: (np.save(d / "np" / "x.npy", x),
                            np.save(d / "np" / "y.npy", y)))]
        took = {}
        for name, write in (sides if r % 2 == 0 else sides[::-1]):
            start = time.monotonic()
            write()
            took[name] = time.monotonic() - start
        ours, numpy_s = took["ours"], took["np"]
        start = time.monotonic()
        store.write(data.source((x, y), "train", "classification"), d / "rl",
                    "train", progress=False)
        reuse = time.monotonic() - start
        row = {"repeat": r, "bytes": int(x.nbytes + y.nbytes), "write_s": ours,
               "np_save_s": numpy_s, "reuse_s": reuse,
               "ratio": ours / numpy_s}
        if r == 0:
            start = time.monotonic()
            store.write(data.source(Items(x, y), "train", "classification"),
                        d / "items", "train", progress=False)
            row["items_s"] = time.monotonic() - start
        rows.append(row)
        print(f"repeat {r}: writer {ours:.3f}s, np.save {numpy_s:.3f}s "
              f"({row['ratio']:.2f}x), reuse {reuse:.3f}s"
              + (f", Dataset of tuples {row['items_s']:.2f}s" if "items_s" in row
                 else ""), flush=True)
        shutil.rmtree(d, ignore_errors=True)
    return rows


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--train", type=int, default=16384, help="training images")
    p.add_argument("--test", type=int, default=2048, help="test images")
    p.add_argument("--bin-dir", default=None,
                   help="daemons and ringctl (default: as LocalCluster finds them)")
    p.add_argument("--out", default=str(REPO / "bench" / "results" / "fit.json"))
    p.add_argument("--skip-job", action="store_true")
    args = p.parse_args()
    torch.set_num_threads(1)
    scratch = pathlib.Path(tempfile.mkdtemp(prefix="fit-bench-"))
    report = {"date": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()),
              "cpu": platform.processor() or platform.machine(),
              "cores": os.cpu_count(), "load": os.getloadavg()[0]}
    try:
        if not args.skip_job:
            start = time.monotonic()
            with ringleader.LocalCluster(2, bin_dir=args.bin_dir) as cluster:
                report["cluster_start_s"] = time.monotonic() - start
                report["job"] = job_side_by_side(args, cluster, scratch)
                start = time.monotonic()
            report["cluster_stop_s"] = time.monotonic() - start
        report["writing"] = writing_side_by_side(args, scratch)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    summarize(report)
    pathlib.Path(args.out).write_text(json.dumps(report, indent=1) + "\n")


def summarize(report: dict) -> None:
    med = statistics.median
    print(f"\n{report['date']}, {report['cores']} cores, load {report['load']:.1f}")
    if "job" in report:
        job = report["job"]
        shares = ", ".join(f"{100 * r['overhead_share']:+.1f}" for r in job)
        print(f"job: ringctl {med(r['ringctl_s'] for r in job):.2f}s, fit "
              f"{med(r['fit_s'] for r in job):.2f}s (write "
              f"{med(r['fit_timings']['write'] for r in job):.2f}s); fit's "
              f"overhead beyond the write {100 * med(r['overhead_share'] for r in job):+.1f}% "
              f"(repeats {shares}); "
              f"reused data {100 * med(r['reuse_overhead_share'] for r in job):+.1f}%")
        print(f"outside the job (coordinator's submit-to-final taken out): fit "
              f"{med(r['fit_outside_s'] for r in job):.3f}s beyond its write, ringctl "
              f"{med(r['ringctl_outside_s'] for r in job):.3f}s: fit's extra "
              f"{100 * med(r['outside_share'] for r in job):+.2f}% of the job")
        print(f"local cluster: start {report['cluster_start_s']:.2f}s, stop "
              f"{report['cluster_stop_s']:.2f}s")
    w = report["writing"]
    ratios = ", ".join(f"{r['ratio']:.2f}" for r in w)
    print(f"writing {w[0]['bytes'] / 1e6:.0f} MB: {med(r['write_s'] for r in w):.3f}s "
          f"vs np.save {med(r['np_save_s'] for r in w):.3f}s: "
          f"{med(r['ratio'] for r in w):.2f}x (repeats {ratios}); reuse "
          f"{med(r['reuse_s'] for r in w):.3f}s; Dataset of tuples "
          f"{w[0].get('items_s', float('nan')):.2f}s")


if __name__ == "__main__":
    main()
