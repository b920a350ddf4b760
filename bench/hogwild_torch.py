#!/usr/bin/python3
"""bench/hogwild_torch.py - PyTorch's Hogwild recipe on Fashion-MNIST: the
peer the hogwild example is measured against.

    bench/hogwild_torch.py [--data DIR] [--workers 2] [--passes 10]
                           [--batch 64] [--lr 0.05] [--seed 1] [--dataloader]
                           [--whole]

The recipe of PyTorch's examples/mnist_hogwild: one torch.nn.Linear(784, 10)
(softmax regression, as the weir example trains), cross-entropy, its
parameters in shared memory (model.share_memory()), and one process per
worker (torch.multiprocessing) running plain SGD on the shared parameters
without locks.  Each worker takes its share of the training set (every
WORKERS-th example) and shuffles it every pass; torch runs one thread per
process.  Batches are sliced from tensors in memory.  Two flags bring back
the original example's choices: --dataloader takes batches through
torch.utils.data.DataLoader, one example at a time, which costs more than
the learning; --whole has every worker go through the whole training set
in each pass (WORKERS times the updates, and the time).

At the end of every pass the workers wait while the main process scores
the test set; that time is left out of the clock.  Prints one JSON object
on stdout:

    workers, passes, batch, lr     the settings
    train_seconds                  wall time of the training (process
                                   start-up included, test scoring not)
    total_seconds                  everything from the script's start,
                                   importing torch and reading the data
                                   included
    accuracy                       test accuracy at the end
    curve                          [train seconds so far, test accuracy]
                                   after each pass, to plot accuracy
                                   against time

Needs Debian's python3-torch and python3-numpy (hence /usr/bin/python3);
the data is Debian's dataset-fashion-mnist.
"""
import time

START = time.monotonic()

import argparse
import gzip
import json
import os
import struct
import sys

import numpy as np
import torch
import torch.multiprocessing as mp
import torch.nn.functional as F

DATA = "/usr/share/datasets/fashion-mnist"


def read_idx(path, magic):
    """The array of an IDX file (gzip or plain), checked against MAGIC."""
    opener = gzip.open if path.endswith(".gz") else open
    try:
        with opener(path, "rb") as f:
            data = f.read()
    except OSError as e:
        sys.exit(f"hogwild_torch: {path}: {e.strerror or e}")
    got = struct.unpack(">I", data[:4])[0] if len(data) >= 4 else None
    if got != magic:
        sys.exit(f"hogwild_torch: {path}: not an IDX file with magic 0x{magic:08x}")
    dims = magic & 0xFF
    shape = struct.unpack(f">{dims}I", data[4:4 + 4 * dims])
    body = np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * dims)
    if body.size != int(np.prod(shape)):
        sys.exit(f"hogwild_torch: {path}: {body.size} bytes of data, the header says {int(np.prod(shape))}")
    return body.reshape(shape)


def load(data_dir, prefix):
    images = read_idx(os.path.join(data_dir, f"{prefix}-images-idx3-ubyte.gz"), 0x803)
    labels = read_idx(os.path.join(data_dir, f"{prefix}-labels-idx1-ubyte.gz"), 0x801)
    x = torch.from_numpy(images.reshape(len(images), -1).astype(np.float32) / 255.0)
    return x, torch.from_numpy(labels.astype(np.int64))


def train(rank, args, model, x, y, done, go):
    torch.set_num_threads(1)
    mine = torch.arange(len(x)) if args.whole else torch.arange(rank, len(x), args.workers)
    gen = torch.Generator().manual_seed(args.seed * 1000 + rank)
    opt = torch.optim.SGD(model.parameters(), lr=args.lr)
    if args.dataloader:
        data = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(x[mine], y[mine]),
                                           batch_size=args.batch, shuffle=True, generator=gen)
    for _ in range(args.passes):
        if args.dataloader:
            batches = data
        else:
            order = mine[torch.randperm(len(mine), generator=gen)]
            batches = ((x[i], y[i]) for i in order.split(args.batch))
        for bx, by in batches:
            opt.zero_grad()
            F.cross_entropy(model(bx), by).backward()
            opt.step()
        done.wait()  # the main process scores the model
        go.wait()


def accuracy(model, x, y):
    with torch.no_grad():
        return (model(x).argmax(1) == y).float().mean().item()


def main():
    p = argparse.ArgumentParser(description="PyTorch Hogwild softmax regression on Fashion-MNIST")
    p.add_argument("--data", default=DATA, help="folder of the IDX .gz files (default %(default)s)")
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--passes", type=int, default=10)
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--lr", type=float, default=0.05)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--dataloader", action="store_true", help="batches through torch's DataLoader")
    p.add_argument("--whole", action="store_true", help="every worker takes the whole training set each pass")
    args = p.parse_args()
    if args.workers < 1 or args.passes < 1 or args.batch < 1 or args.lr <= 0:
        p.error("--workers, --passes and --batch must be at least 1, --lr positive")

    torch.set_num_threads(1)
    torch.manual_seed(args.seed)
    x, y = load(args.data, "train")
    tx, ty = load(args.data, "t10k")
    x.share_memory_()
    y.share_memory_()
    model = torch.nn.Linear(x.shape[1], int(y.max()) + 1)
    model.share_memory()

    done, go = mp.Barrier(args.workers + 1), mp.Barrier(args.workers + 1)
    procs = [mp.Process(target=train, args=(r, args, model, x, y, done, go)) for r in range(args.workers)]
    curve, paused = [], 0.0
    t0 = time.monotonic()
    for proc in procs:
        proc.start()
    for _ in range(args.passes):
        done.wait()
        stop = time.monotonic()
        curve.append([round(stop - t0 - paused, 3), accuracy(model, tx, ty)])
        paused += time.monotonic() - stop
        go.wait()
    for proc in procs:
        proc.join()
        if proc.exitcode:
            sys.exit(f"hogwild_torch: a worker failed with exit code {proc.exitcode}")
    train_seconds = time.monotonic() - t0 - paused

    print(json.dumps({
        "workers": args.workers, "passes": args.passes, "batch": args.batch, "lr": args.lr,
        "dataloader": args.dataloader, "whole": args.whole,
        "train_seconds": round(train_seconds, 3),
        "total_seconds": round(time.monotonic() - START, 3),
        "accuracy": round(curve[-1][1], 4),
        "curve": [[s, round(a, 4)] for s, a in curve],
    }))


if __name__ == "__main__":
    main()
