"""The GIL is released during the work: another Python thread runs meanwhile."""

import threading
import time

import numpy as np

import arrays.k2 as k2


def test_ctc_loss_releases_the_gil():
    rng = np.random.default_rng(1)
    n, t, c = 16, 400, 200
    lp = rng.standard_normal((n, t, c)).astype(np.float32)
    lp -= np.log(np.exp(lp).sum(-1, keepdims=True))
    lp = lp.astype(np.float32)
    segs = np.array([[i, 0, t] for i in range(n)], dtype=np.int32)
    targets = [list(rng.integers(1, c, size=60)) for _ in range(n)]
    graph = k2.ctc_graph([[int(x) for x in tt] for tt in targets])
    dense = k2.DenseFsaVec(lp, segs)

    start = time.perf_counter()
    k2.ctc_loss_with_grad(graph, dense, float("inf"))
    alone = time.perf_counter() - start

    ticks = 0
    done = threading.Event()

    def work():
        for _ in range(10):
            k2.ctc_loss_with_grad(graph, dense, float("inf"))
        done.set()

    worker = threading.Thread(target=work)
    worker.start()
    while not done.is_set():
        ticks += 1
        time.sleep(0.0005)
    worker.join()
    # with the GIL held for the whole call, this loop could not have run while it worked
    # (ten calls take 10 x `alone`); released, it ticks throughout
    assert ticks > 50, (ticks, alone)
