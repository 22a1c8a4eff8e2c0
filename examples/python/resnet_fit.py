"""The ResNet example (examples/resnet/) written with ringleader.fit.

    /usr/bin/python3 examples/python/resnet_fit.py

The same network (examples/resnet/model.py, seed 42), the same data (Fashion-MNIST
padded to 3x32x32 uint8, as examples/resnet/prepare.py makes it) and the same
recipe as examples/resnet/resnet_fashion_mnist.textproto: Adam 1e-3, 10 epochs, 64
per rank on 2 workers, x/255 then per-channel mean/std. fit writes the arrays once
(uint8, as given) and the workers normalize them as they read, as the job file's
`dataset.transform` says; the textproto reaches 90.6% test accuracy
(bench/README.md, "The example workloads, full runs").

Without $RINGLEADER_COORDINATOR, fit starts a coordinator and --workers workers on
this machine for the run. --limit-train/--limit-test/--epochs make a quick run.
"""
import argparse
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "resnet"))
# This checkout's package (scripts/setup.sh also makes it importable anywhere).
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))

import ringleader  # noqa: E402
from model import build  # noqa: E402  (examples/resnet/model.py)
from prepare import channel_stats, load_split  # noqa: E402


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--data-dir", default="/usr/share/datasets/fashion-mnist")
    p.add_argument("--limit-train", type=int, default=0, help="first N train images (0: all)")
    p.add_argument("--limit-test", type=int, default=0, help="first M test images (0: all)")
    p.add_argument("--epochs", type=int, default=10)
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--out", default="", help="save the trained state_dict here (torch.save)")
    args = p.parse_args(argv)

    train_x, train_y = load_split(args.data_dir, "train", args.limit_train)
    test_x, test_y = load_split(args.data_dir, "t10k", args.limit_test)
    mean, std = channel_stats(train_x)
    result = ringleader.fit(
        build([16, 32, 64], [1, 1, 1], seed=42), (train_x, train_y),
        test=(test_x, test_y), optimizer="adam", lr=1e-3, epochs=args.epochs,
        batch_size=64, workers=args.workers, seed=42,
        transform={"scale": 1 / 255, "mean": mean, "std": std})
    for m in result.metrics:
        print(f"epoch {m['epoch']}: test accuracy {100 * m['accuracy']:.2f}%, "
              f"test loss {m['test_loss']:.4f}")
    if args.out:
        import torch
        torch.save(result.state_dict, args.out)
        print(f"state_dict saved to {args.out}")


if __name__ == "__main__":
    main()
