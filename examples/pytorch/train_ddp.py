#!/usr/bin/env python3
"""Fashion-MNIST on PyTorch DistributedDataParallel (CPU, gloo), launched by autotune-run.

    sbatch --autotune=fmnist-ddp --wrap 'autotune-run python3 train_ddp.py --epochs 2'

autotune-run starts one process per rank with srun on the configuration chosen for the job;
each rank takes its rank and the world size from Slurm (SLURM_PROCID, SLURM_NTASKS), the
rendezvous address from the step's first node and a port from the job and step ids, and its
threads from SLURM_CPUS_PER_TASK.  The data is Debian's dataset-fashion-mnist
(/usr/share/datasets/fashion-mnist); --samples takes a subset.

Measurement (docs/reporting.md): with --report (the default when the slurm_autotune module is
found) every rank reports its batches through slurm_autotune.Profiler, so the class can be tuned
by throughput and in steps mode (AUTOTUNE_PROFILE_BATCHES / _ONLY end the profiling steps early);
with --no-report it reports nothing and the class is tuned by the run's completion time.
"""
import argparse
import gzip
import os
import socket
import subprocess
import sys
import time

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP


def positive_int(text):
    try:
        v = int(text, 10)
    except ValueError:
        raise argparse.ArgumentTypeError("'%s' is not a whole number" % text) from None
    if v < 1:
        raise argparse.ArgumentTypeError("'%s' is below 1" % text)
    return v


def positive_float(text):
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError("'%s' is not a number" % text) from None
    if not v > 0 or v != v or v == float("inf"):
        raise argparse.ArgumentTypeError("'%s' is not a number above 0" % text)
    return v


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--epochs", type=positive_int, default=1, help="passes over the data (default 1)")
    p.add_argument("--samples", type=positive_int, default=None,
                   help="use the first N training samples (default: all 60000)")
    p.add_argument("--batch-size", type=positive_int, default=64, help="samples per batch and rank (default 64)")
    p.add_argument("--lr", type=positive_float, default=0.1, help="learning rate (default 0.1)")
    p.add_argument("--hidden", type=positive_int, default=128, help="hidden units (default 128)")
    p.add_argument("--data", default="/usr/share/datasets/fashion-mnist",
                   help="directory of the idx files (Debian's dataset-fashion-mnist)")
    p.add_argument("--seed", type=int, default=1)
    rep = p.add_mutually_exclusive_group()
    rep.add_argument("--report", dest="report", action="store_true", default=None,
                     help="report throughput through slurm_autotune (default when it is installed)")
    rep.add_argument("--no-report", dest="report", action="store_false",
                     help="report nothing: the class is measured by completion time")
    return p.parse_args(argv)


def read_idx(path):
    with gzip.open(path, "rb") as f:
        data = f.read()
    ndim = data[3]
    dims = [int.from_bytes(data[4 + 4 * i:8 + 4 * i], "big") for i in range(ndim)]
    t = torch.frombuffer(bytearray(data[4 + 4 * ndim:]), dtype=torch.uint8)
    return t.reshape(dims)


def load(data_dir, prefix, limit):
    x = read_idx(os.path.join(data_dir, prefix + "-images-idx3-ubyte.gz"))
    y = read_idx(os.path.join(data_dir, prefix + "-labels-idx1-ubyte.gz"))
    if limit:
        x, y = x[:limit], y[:limit]
    return x.reshape(len(x), -1).float().div_(255.0), y.long()


def env_int(name, default):
    v = os.environ.get(name, "")
    if v == "":
        return default
    try:
        return int(v, 10)
    except ValueError:
        sys.exit("train_ddp.py: %s: '%s' is not a whole number" % (name, v))


def rendezvous():
    """MASTER_ADDR and MASTER_PORT for the step, unless given: the step's first node (its address
    as the resolver knows it, else the address of the node srun ran on), and a port from the job
    and step ids, so that concurrent steps do not meet."""
    addr = os.environ.get("MASTER_ADDR")
    if not addr:
        first = None
        nodes = os.environ.get("SLURM_STEP_NODELIST") or os.environ.get("SLURM_JOB_NODELIST")
        if nodes:
            try:
                out = subprocess.run(["scontrol", "show", "hostnames", nodes], capture_output=True, text=True,
                                     timeout=30).stdout.split()
                first = out[0] if out else None
            except (OSError, subprocess.SubprocessError):
                first = None
        try:
            addr = socket.gethostbyname(first) if first else None
        except OSError:
            addr = None
        addr = addr or os.environ.get("SLURM_LAUNCH_NODE_IPADDR") or "127.0.0.1"
    port = os.environ.get("MASTER_PORT") or str(
        20000 + (env_int("SLURM_JOB_ID", 0) * 7 + env_int("SLURM_STEP_ID", 0)) % 20000)
    return addr, port


class Net(nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.fc1 = nn.Linear(784, hidden)
        self.fc2 = nn.Linear(hidden, 10)

    def forward(self, x):
        return self.fc2(F.relu(self.fc1(x)))


def main(argv):
    args = parse_args(argv)
    rank = env_int("SLURM_PROCID", env_int("RANK", 0))
    world = env_int("SLURM_NTASKS", env_int("WORLD_SIZE", 1))
    if not 0 <= rank < world:
        sys.exit("train_ddp.py: rank %d is not below the world size %d" % (rank, world))
    torch.set_num_threads(max(1, env_int("SLURM_CPUS_PER_TASK", 1)))
    torch.manual_seed(args.seed)

    prof = None
    if args.report is not False:
        try:
            from slurm_autotune import Profiler
        except ImportError:
            if args.report:
                sys.exit("train_ddp.py: --report: the slurm_autotune module is not installed (docs/reporting.md)")
        else:
            prof = Profiler()

    addr, port = rendezvous()
    os.environ.setdefault("MASTER_ADDR", addr)
    os.environ.setdefault("MASTER_PORT", port)
    if addr.startswith("127.") and "GLOO_SOCKET_IFNAME" not in os.environ:
        os.environ["GLOO_SOCKET_IFNAME"] = "lo"
    dist.init_process_group("gloo", rank=rank, world_size=world)

    x, y = load(args.data, "train", args.samples)
    per_rank = len(x) // world
    if per_rank < args.batch_size:
        sys.exit("train_ddp.py: %d samples for %d ranks: fewer than one batch (%d) per rank"
                 % (len(x), world, args.batch_size))
    # Every rank gets the same number of whole batches, so that they all take the same steps.
    batches = per_rank // args.batch_size
    model = DDP(Net(args.hidden))
    opt = torch.optim.SGD(model.parameters(), lr=args.lr)
    start = time.monotonic()
    for epoch in range(args.epochs):
        g = torch.Generator().manual_seed(args.seed + epoch)
        order = torch.randperm(len(x), generator=g)[rank * per_rank:(rank + 1) * per_rank]
        for b in range(batches):
            idx = order[b * args.batch_size:(b + 1) * args.batch_size]
            opt.zero_grad()
            loss = F.cross_entropy(model(x[idx]), y[idx])
            loss.backward()
            opt.step()
            if prof:
                prof.step(len(idx))
    elapsed = time.monotonic() - start
    if prof:
        prof.close()
    if rank == 0:
        tx, ty = load(args.data, "t10k", 2000)
        with torch.no_grad():
            acc = (model.module(tx).argmax(1) == ty).float().mean().item()
        print("train_ddp.py: ranks=%d epochs=%d samples=%d batches/rank/epoch=%d time=%.2fs test accuracy=%.3f"
              % (world, args.epochs, per_rank * world, batches, elapsed, acc), flush=True)
    dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
