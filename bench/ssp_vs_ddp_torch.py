#!/usr/bin/env python3
"""The PyTorch DistributedDataParallel side of bench/ssp_vs_ddp (CPU, gloo, one thread per rank).

    mpirun -np 2 python3 bench/ssp_vs_ddp_torch.py mlp --train-samples 12000
    mpirun -np 2 python3 bench/ssp_vs_ddp_torch.py mf --ratings /tmp/r.bin --rank 32 --batch 256

The same models, data, mini-batch sizes, learning rates and epochs as the C++ examples:
  mlp  examples/mlp: 784-1024-1024-10 (ReLU), nn.Linear's default initialization, cross-entropy;
       the first --train-samples Fashion-MNIST images, a static share per rank.
  mf   examples/mf: the ratings it wrote with --save-data, users and items as
       nn.Embedding(sparse=True) (users N(0, 0.1), items zero, as in mf), loss
       1/2 sum over the batch of (error^2 + lambda (|u|^2 + |v|^2)), --batch ratings per step in user
       order, each rank the users of a static share.
In the C++ programs every worker's step is added to the model (a parameter server sums them;
MPI_Allreduce sums them); DDP averages the gradients over the ranks, so the loss is multiplied by
the world size to make the same --lr move the model by the same amount.  mlp: --lr-decay multiplies
the learning rate after each epoch (as the C++ programs' --lr-decay); --seed seeds the initial model
and the order of the images (PyTorch's generator: not the same values as the C++ programs' seed).

Straggler: --straggler-rank R sleeps (F-1) times each step's duration after the step (owed sleep
paid in slices of at least 1 ms, as examples/common.cc's Straggler).
Prints a "final:" line with the fields bench/ssp_vs_ddp reads (samples_per_s or ratings_per_s,
time_to_target_s, test_acc or train_rmse: the training RMSE of the last epoch's steps, the loss,
and test_rmse).  Rank and world size come from Open MPI's or Slurm's
environment; the rendezvous is MASTER_ADDR (127.0.0.1) and MASTER_PORT (required).
"""
import argparse
import gzip
import os
import sys
import time

import numpy as np
import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP


def env_int(names, default):
    for n in names:
        v = os.environ.get(n)
        if v not in (None, ""):
            return int(v)
    return default


class Straggler:
    def __init__(self, active, factor):
        self.active, self.factor, self.owed = active, factor, 0.0

    def after(self, step_s):
        if not self.active:
            return
        self.owed += (self.factor - 1.0) * step_s
        if self.owed >= 1e-3:
            a = time.monotonic()
            time.sleep(self.owed)
            self.owed -= time.monotonic() - a


def read_idx(path):
    with gzip.open(path, "rb") as f:
        data = f.read()
    ndim = data[3]
    dims = [int.from_bytes(data[4 + 4 * i:8 + 4 * i], "big") for i in range(ndim)]
    return torch.frombuffer(bytearray(data[4 + 4 * ndim:]), dtype=torch.uint8).reshape(dims)


def fmnist(data, prefix, limit=None):
    x = read_idx(os.path.join(data, prefix + "-images-idx3-ubyte.gz"))
    y = read_idx(os.path.join(data, prefix + "-labels-idx1-ubyte.gz"))
    if limit:
        x, y = x[:limit], y[:limit]
    return x.reshape(len(x), -1).float().div_(255.0), y.long()


def mlp(args, rank, world):
    x, y = fmnist(args.data, "train", args.train_samples or None)
    tx, ty = fmnist(args.data, "t10k")
    torch.manual_seed(args.seed)
    sizes = [784] + [int(h) for h in args.hidden.split(",")] + [10]
    layers = []
    for i in range(len(sizes) - 1):
        layers.append(nn.Linear(sizes[i], sizes[i + 1]))
        if i + 2 < len(sizes):
            layers.append(nn.ReLU())
    net = nn.Sequential(*layers)
    model = DDP(net)
    opt = torch.optim.SGD(model.parameters(), lr=args.lr)
    perm = torch.randperm(len(x), generator=torch.Generator().manual_seed(args.seed))
    share = len(x) // world
    mine = perm[rank * share:(rank + 1) * share]
    steps = (share + args.batch - 1) // args.batch
    slow = Straggler(rank == args.straggler_rank, args.straggler_factor)
    snaps, eval_s, samples = [], 0.0, 0
    dist.barrier()
    t0 = time.monotonic()
    next_eval = args.eval_interval
    for e in range(args.epochs):
        for g in opt.param_groups:
            g["lr"] = args.lr * args.lr_decay ** e
        for s in range(steps):
            a = time.monotonic()
            idx = mine[s * args.batch:(s + 1) * args.batch]
            opt.zero_grad(set_to_none=True)
            loss = F.cross_entropy(model(x[idx]), y[idx]) * world
            loss.backward()
            opt.step()
            slow.after(time.monotonic() - a)
            samples += len(idx) * world
            if rank == 0 and args.eval_interval > 0:
                t = time.monotonic() - t0 - eval_s
                if t >= next_eval:
                    c = time.monotonic()
                    snaps.append((t, e * steps + s + 1, [p.detach().clone() for p in net.parameters()]))
                    next_eval = t + args.eval_interval
                    eval_s += time.monotonic() - c
    train_s = time.monotonic() - t0 - eval_s
    if rank == 0:
        reached = -1.0
        live = [p.detach().clone() for p in net.parameters()]
        with torch.no_grad():
            for t, step, ps in snaps:
                for p, v in zip(net.parameters(), ps):
                    p.copy_(v)
                acc = (net(tx[:args.eval_samples]).argmax(1) == ty[:args.eval_samples]).float().mean().item()
                if reached < 0 and acc >= args.target_acc:
                    reached = t
                print("eval t=%.3f step=%d acc=%.4f" % (t, step, acc))
            for p, v in zip(net.parameters(), live):
                p.copy_(v)
            acc = (net(tx).argmax(1) == ty).float().mean().item()
        print("final: consistency=ddp ranks=%d workers=%d servers=0 epochs=%d finished=1 test_acc=%.4f "
              "train_s=%.3f samples=%d samples_per_s=%.0f target_acc=%.3f time_to_target_s=%.3f "
              "straggler_rank=%d" % (world, world, args.epochs, acc, train_s, samples, samples / train_s,
                                     args.target_acc, reached, args.straggler_rank), flush=True)


def read_ratings(path):
    with open(path, "rb") as f:
        if f.read(4) != b"MFR1":
            sys.exit("ssp_vs_ddp_torch.py: --ratings: '%s' is not a file of mf --save-data" % path)
        users, items = np.frombuffer(f.read(8), dtype=np.int32)
        ntrain, ntest = np.frombuffer(f.read(16), dtype=np.uint64)
        users, items, ntrain, ntest = int(users), int(items), int(ntrain), int(ntest)

        def arr(n, dt):
            return np.frombuffer(f.read(n * np.dtype(dt).itemsize), dtype=dt)
        off, item, value = arr(users + 1, np.uint32), arr(ntrain, np.uint32), arr(ntrain, np.float32)
        toff, titem, tvalue = arr(users + 1, np.uint32), arr(ntest, np.uint32), arr(ntest, np.float32)
    return users, items, off, item, value, toff, titem, tvalue


class MF(nn.Module):
    def __init__(self, users, items, k):
        super().__init__()
        self.u = nn.Embedding(users, k, sparse=True)
        self.v = nn.Embedding(items, k, sparse=True)
        with torch.no_grad():
            self.u.weight.normal_(0.0, 0.1)
            self.v.weight.zero_()

    def forward(self, uid, iid):
        u, v = self.u(uid), self.v(iid)
        return (u * v).sum(1), u, v


def mf(args, rank, world):
    users, items, off, item, value, toff, titem, tvalue = read_ratings(args.ratings)
    torch.manual_seed(args.seed)
    net = MF(users, items, args.rank)
    model = DDP(net)
    opt = torch.optim.SGD(model.parameters(), lr=args.lr)
    lo, hi = users * rank // world, users * (rank + 1) // world
    # This rank's training ratings in user order; every rank takes the same number of steps.
    uid = torch.from_numpy(np.repeat(np.arange(lo, hi), np.diff(off[lo:hi + 1].astype(np.int64))))
    iid = torch.from_numpy(item[off[lo]:off[hi]].astype(np.int64))
    r = torch.from_numpy(value[off[lo]:off[hi]].copy())
    n = torch.tensor([len(r)])
    dist.all_reduce(n, op=dist.ReduceOp.MIN)
    steps = (int(n) + args.batch - 1) // args.batch
    tu = torch.from_numpy(np.repeat(np.arange(users), np.diff(toff.astype(np.int64))))
    ti = torch.from_numpy(titem.astype(np.int64))
    tr = torch.from_numpy(tvalue.copy())
    slow = Straggler(rank == args.straggler_rank, args.straggler_factor)
    lam = args.lam
    dist.barrier()
    t0 = time.monotonic()
    eval_s, reached, rmse, ratings = 0.0, -1.0, 0.0, 0
    for e in range(args.epochs):
        train_se = torch.zeros(2, dtype=torch.float64)
        for s in range(steps):
            a = time.monotonic()
            sl = slice(s * args.batch, min((s + 1) * args.batch, int(n)))
            pred, u, v = model(uid[sl], iid[sl])
            se = ((r[sl] - pred) ** 2).sum()
            loss = 0.5 * (se + lam * ((u * u).sum() + (v * v).sum()))
            train_se[0] += float(se)
            train_se[1] += sl.stop - sl.start
            opt.zero_grad(set_to_none=True)
            (loss * world).backward()
            opt.step()
            slow.after(time.monotonic() - a)
            ratings += (sl.stop - sl.start) * world
        c = time.monotonic()
        dist.all_reduce(train_se)
        train_rmse = float((train_se[0] / train_se[1]).sqrt())
        with torch.no_grad():
            p = (net.u.weight[tu] * net.v.weight[ti]).sum(1)
            rmse = float(((tr - p) ** 2).mean().sqrt())
        t = c - t0 - eval_s
        eval_s += time.monotonic() - c
        if reached < 0 and args.target_rmse > 0 and train_rmse <= args.target_rmse:
            reached = t
        if rank == 0:
            print("epoch %d train_rmse=%.4f test_rmse=%.4f t=%.3f" % (e + 1, train_rmse, rmse, t), flush=True)
    train_s = time.monotonic() - t0 - eval_s
    if rank == 0:
        print("final: consistency=ddp ranks=%d workers=%d servers=0 epochs=%d test_rmse=%.4f train_rmse=%.4f "
              "train_s=%.3f ratings_per_s=%.0f target_rmse=%g time_to_target_s=%.3f straggler_rank=%d"
              % (world, world, args.epochs, rmse, train_rmse, train_s, ratings / train_s, args.target_rmse,
                 reached, args.straggler_rank), flush=True)


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="model", required=True)
    for name in ("mlp", "mf"):
        q = sub.add_parser(name)
        q.add_argument("--epochs", type=int, default=1)
        q.add_argument("--batch", type=int, default=32 if name == "mlp" else 1)
        q.add_argument("--lr", type=float, default=0.05)
        q.add_argument("--seed", type=int, default=1)
        q.add_argument("--straggler-rank", type=int, default=-1)
        q.add_argument("--straggler-factor", type=float, default=1.0)
    m = sub.choices["mlp"]
    m.add_argument("--data", default="/usr/share/datasets/fashion-mnist")
    m.add_argument("--train-samples", type=int, default=0)
    m.add_argument("--hidden", default="1024,1024")
    m.add_argument("--lr-decay", type=float, default=1.0,
                   help="the learning rate is multiplied by this after each epoch (0.01 to 1)")
    m.add_argument("--eval-interval", type=float, default=1.0)
    m.add_argument("--eval-samples", type=int, default=2000)
    m.add_argument("--target-acc", type=float, default=0.8)
    f = sub.choices["mf"]
    f.add_argument("--ratings", required=True, help="a file written by examples/mf --save-data")
    f.add_argument("--rank", type=int, default=8)
    f.add_argument("--lambda", dest="lam", type=float, default=0.01)
    f.add_argument("--target-rmse", type=float, default=0.0)
    args = p.parse_args(argv)
    if args.epochs < 1 or args.batch < 1 or not args.lr > 0 or args.straggler_factor < 1:
        p.error("--epochs and --batch must be >= 1, --lr > 0, --straggler-factor >= 1")
    if args.model == "mlp" and not 0.01 <= args.lr_decay <= 1:
        p.error("--lr-decay: '%g' is out of range; allowed: 0.01 to 1" % args.lr_decay)
    rank = env_int(("OMPI_COMM_WORLD_RANK", "PMIX_RANK", "SLURM_PROCID", "RANK"), 0)
    world = env_int(("OMPI_COMM_WORLD_SIZE", "SLURM_NTASKS", "WORLD_SIZE"), 1)
    if "MASTER_PORT" not in os.environ:
        sys.exit("ssp_vs_ddp_torch.py: set MASTER_PORT (the rendezvous port)")
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    if os.environ["MASTER_ADDR"].startswith("127.") and "GLOO_SOCKET_IFNAME" not in os.environ:
        os.environ["GLOO_SOCKET_IFNAME"] = "lo"
    torch.set_num_threads(1)
    dist.init_process_group("gloo", rank=rank, world_size=world)
    (mlp if args.model == "mlp" else mf)(args, rank, world)
    dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
