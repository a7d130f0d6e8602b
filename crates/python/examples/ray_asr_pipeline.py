"""The ASR pipeline on Ray: a Kaldi ``feats.scp`` split into shards, each decoded by one
Ray task against an HLG built once on the driver.

    feats.scp => shards => (per task) ReadHelper => features @ W => log_softmax
        => DenseFsaVec => intersect_dense_pruned(HLG) => best words + lattices

The "model" is a fixed random projection ``W`` (features to token logits), enough to show
the data flow. The HLG (``arrays.k2``, built as icefall's ``compile_hlg``) and ``W`` go to
the object store once with ``ray.put``; the HLG crosses as its compact pickled form. Each
task writes ``text.<shard>`` (``utt word word ...`` lines) and ``lattices.<shard>.pkl``
(the lattices, pickled in order) under the output folder, each written to a temporary
name and renamed, so a task that Ray runs again after a lost node replaces its files
instead of adding to them.

    python ray_asr_pipeline.py FEATS_SCP OUT_DIR [--shards N] [--address HOST:6379]
    python ray_asr_pipeline.py FEATS_SCP OUT_DIR --no-ray
"""

from __future__ import annotations

import argparse
import os
import pickle
from typing import Callable, List, Optional, Sequence, Tuple

import numpy as np

import arrays.k2 as k2
import arrays.kaldi as kaldiio

# tokens: blank 0, a=1 b=2 c=3 d=4, #0=5; words: 1 "ab", 2 "bc", 3 "ad", #0=4
L_TEXT = """0 1 1 1 -0.5
0 2 2 2 -0.25
0 3 1 3 -1.5
0 0 5 4 0
0 4 -1 -1 0
1 0 2 0 0
2 0 3 0 0
3 0 4 0 0
4
"""
G_TEXT = """0 0 1 0.5
0 0 2 0.5
0 0 3 0.5
0 0.0
"""
WORDS = {1: "ab", 2: "bc", 3: "ad"}
SPELLING = {1: [1, 2], 2: [2, 3], 3: [1, 4]}
FIRST_TOKEN_DISAMBIG_ID, FIRST_WORD_DISAMBIG_ID, MAX_TOKEN = 5, 4, 4
FEAT_DIM = 40
SEARCH_BEAM, OUTPUT_BEAM, MIN_ACTIVE, MAX_ACTIVE = 20.0, 8.0, 30, 10000


def build_hlg() -> k2.Fsa:
    """H o L o G as icefall's compile_hlg builds it (determinized LG, disambiguation
    symbols removed, epsilons removed, composed with the CTC topology)."""
    L = k2.arc_sort(k2.Fsa.from_str(L_TEXT, acceptor=False))
    G = k2.arc_sort(k2.Fsa.from_openfst(G_TEXT, acceptor=True))
    LG = k2.connect(k2.compose(L, G))
    LG = k2.connect(k2.determinize(LG))
    LG.labels[LG.labels >= FIRST_TOKEN_DISAMBIG_ID] = 0
    LG.aux_labels.values[LG.aux_labels.values >= FIRST_WORD_DISAMBIG_ID] = 0
    LG = k2.connect(k2.remove_epsilon(LG))
    LG.aux_labels = LG.aux_labels.remove_values_eq(0)
    LG = k2.arc_sort(LG)
    H = k2.ctc_topo(MAX_TOKEN)
    return k2.arc_sort(k2.connect(k2.compose(H, LG, inner_labels="tokens")))


def make_model(seed: int = 0) -> np.ndarray:
    """The fixed random projection from features to token logits, (FEAT_DIM, MAX_TOKEN + 1)."""
    return np.random.default_rng(seed).standard_normal((FEAT_DIM, MAX_TOKEN + 1)).astype(np.float32)


def log_probs(feats: np.ndarray, model: np.ndarray) -> np.ndarray:
    logits = feats.astype(np.float32) @ model
    logits -= logits.max(axis=1, keepdims=True)
    return (logits - np.log(np.exp(logits).sum(axis=1, keepdims=True))).astype(np.float32)


def decode_shard(
    scp_path: str, hlg: k2.Fsa, model: np.ndarray, out_dir: str, name: str
) -> List[Tuple[str, List[str]]]:
    """Decodes every utterance of one scp shard; writes ``text.<name>`` and
    ``lattices.<name>.pkl`` (each renamed into place) and returns ``(utt, words)``."""
    results, lattices = [], []
    with kaldiio.ReadHelper(f"scp:{scp_path}") as reader:
        for key, feats in reader:
            lp = log_probs(np.asarray(feats), model)
            dense = k2.DenseFsaVec(lp[None], np.array([[0, 0, lp.shape[0]]], dtype=np.int32))
            lattice = k2.intersect_dense_pruned(hlg, dense, SEARCH_BEAM, OUTPUT_BEAM, MIN_ACTIVE, MAX_ACTIVE)
            (_, word_ids, _), = k2.one_best(lattice)
            results.append((key, [WORDS[w] for w in word_ids]))
            lattices.append((key, lattice))
    _write_atomic(os.path.join(out_dir, f"text.{name}"), "".join(f"{k} {' '.join(w)}\n" for k, w in results).encode())
    _write_atomic(os.path.join(out_dir, f"lattices.{name}.pkl"), pickle.dumps(lattices, protocol=pickle.HIGHEST_PROTOCOL))
    return results


def _write_atomic(path: str, data: bytes) -> None:
    tmp = f"{path}.tmp.{os.getpid()}"
    with open(tmp, "wb") as f:
        f.write(data)
    os.replace(tmp, path)


def split_scp(scp_path: str, n_shards: int, out_dir: str) -> List[str]:
    """Splits ``scp_path`` into ``n_shards`` scp files of consecutive lines (as Kaldi's
    ``split_scp.pl``) under ``out_dir/split<n>/``; returns their paths."""
    with open(scp_path, encoding="utf-8") as f:
        lines = [line for line in f if line.strip()]
    folder = os.path.join(out_dir, f"split{n_shards}")
    os.makedirs(folder, exist_ok=True)
    paths = []
    for i, part in enumerate(np.array_split(np.arange(len(lines)), n_shards)):
        path = os.path.join(folder, f"feats.{i}.scp")
        with open(path, "w", encoding="utf-8") as f:
            f.writelines(lines[j] for j in part)
        paths.append(path)
    return paths


def run_ray(
    scp_path: str,
    out_dir: str,
    *,
    n_shards: int = 4,
    address: Optional[str] = None,
    task: Optional[Callable] = None,
) -> List[Tuple[str, List[str]]]:
    """The pipeline on Ray: one task per shard (retried by Ray when its node is lost)."""
    import ray

    if not ray.is_initialized():
        ray.init(address=address)
    os.makedirs(out_dir, exist_ok=True)
    shards = split_scp(scp_path, n_shards, out_dir)
    hlg_ref = ray.put(build_hlg())  # built once, shipped as its compact pickled form
    model_ref = ray.put(make_model())
    # SPREAD: the shards go round the nodes rather than filling the first one
    remote = ray.remote(num_cpus=1, max_retries=3, scheduling_strategy="SPREAD")(task or decode_shard)
    refs = [remote.remote(path, hlg_ref, model_ref, out_dir, str(i)) for i, path in enumerate(shards)]
    return [r for part in ray.get(refs) for r in part]


def run_local(scp_path: str, out_dir: str, *, n_shards: int = 4) -> List[Tuple[str, List[str]]]:
    """The same shards decoded one after the other in this process (the baseline)."""
    os.makedirs(out_dir, exist_ok=True)
    hlg, model = build_hlg(), make_model()
    shards = split_scp(scp_path, n_shards, out_dir)
    return [r for i, path in enumerate(shards) for r in decode_shard(path, hlg, model, out_dir, str(i))]


def make_features(
    ark_scp: str, n_utts: int, seed: int = 1, model: Optional[np.ndarray] = None
) -> List[Tuple[str, List[str]]]:
    """Writes ``n_utts`` utterances to an archive and its scp (``ark,scp:A,S``) whose
    features project through ``model`` onto logits that spell known words (blanks between
    tokens, a little noise); returns ``(utt, words)``, what decoding must find."""
    rng = np.random.default_rng(seed)
    model = make_model() if model is None else model
    back = np.linalg.pinv(model)  # logits @ pinv(W) @ W == logits: W has full column rank
    truth = []
    with kaldiio.WriteHelper(f"ark,scp:{ark_scp}") as writer:
        for u in range(n_utts):
            word_ids = rng.integers(1, len(WORDS) + 1, size=int(rng.integers(1, 6))).tolist()
            tokens = [t for w in word_ids for t in SPELLING[w]]
            frames = []
            for t in tokens:
                frames += [0] * int(rng.integers(1, 3)) + [t] * int(rng.integers(1, 3))
            frames += [0]
            logits = rng.normal(0.0, 0.3, size=(len(frames), MAX_TOKEN + 1))
            logits[np.arange(len(frames)), frames] += 6.0
            key = f"utt{u:05d}"
            writer(key, (logits @ back).astype(np.float32))
            truth.append((key, [WORDS[w] for w in word_ids]))
    return truth


def read_text(out_dir: str) -> List[str]:
    """Every ``text.*`` line the pipeline wrote, sorted."""
    lines = []
    for name in sorted(os.listdir(out_dir)):
        if name.startswith("text.") and ".tmp." not in name:
            with open(os.path.join(out_dir, name), encoding="utf-8") as f:
                lines += f.read().splitlines()
    return sorted(lines)


def main(argv: Optional[Sequence[str]] = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("feats_scp")
    parser.add_argument("out_dir")
    parser.add_argument("--shards", type=int, default=4)
    parser.add_argument("--address", default=None)
    parser.add_argument("--no-ray", action="store_true")
    parser.add_argument("--make-utts", type=int, default=0, help="first write this many test utterances")
    args = parser.parse_args(argv)
    if args.make_utts:
        ark = os.path.splitext(args.feats_scp)[0] + ".ark"
        make_features(f"{ark},{args.feats_scp}", args.make_utts)
    if args.no_ray:
        results = run_local(args.feats_scp, args.out_dir, n_shards=args.shards)
    else:
        results = run_ray(args.feats_scp, args.out_dir, n_shards=args.shards, address=args.address)
    print(f"{len(results)} utterances decoded into {args.out_dir}")


if __name__ == "__main__":
    main()
