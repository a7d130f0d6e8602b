"""ragged-fsa's decoding peer: Kaldi's `FasterDecoder` (the `kaldi-decoder` package, with
`kaldifst` graphs) on the workload of crates/ragged-fsa/benches/decode.rs.

The graph is the HLG our bench compiled (icefall's compile_hlg.py steps on the seeded L and G
of `graphs.py`, 5,000 words, 40 phones), read from the OpenFst text with word-id lists the
bench writes to `<target>/ragged-fsa-bench/hlg_<words>.txt`, and made a Kaldi graph the way
icefall's Kaldi decoding expects it: input label = token + 1 (0 is epsilon in OpenFst,
`DecodableCtc` reads column `label - 1`), output label = word id; an arc with several word ids
becomes a chain whose later arcs have epsilon input (non-emitting, as in Kaldi graphs); costs
are negated scores and k2's final arcs are final weights (as the text already has them).
The scores are the log-softmaxed logits of `ctc_inputs.py` (N = 16, T = 500, C = 41, seed 14).

Timed, one thread (the decoder is single-threaded): for each of the 16 utterances in turn,
`DecodableCtc` over its frames, `FasterDecoder.decode` (beam 20, max_active 10000,
min_active 30) and `get_best_path`. Before timing, the best word sequences are compared with
ours (`best_<words>.txt`) and the agreement is printed on stderr.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
from common import *  # noqa: E402,F403
from ctc_inputs import ctc_input  # noqa: E402

CRATE = "ragged-fsa"
PEER = "kaldi-decoder"
NUM_PHONES = 40



def bench_dir():
    """Where `benches/decode.rs` leaves the graph and our best paths."""
    return os.path.join(target_dir(), "ragged-fsa-bench")


def kaldi_graph_text(text):
    """Our HLG text (`src dest token [w ..] cost`, final lines `state cost`) as OpenFst
    transducer text for Kaldi: tokens shifted by one, one word per arc (chains of epsilon
    input arcs for the rest)."""
    rows, finals = [], []
    num_states = 0
    for line in text.splitlines():
        if not line.strip():
            continue
        if "[" in line:
            head, rest = line.split("[", 1)
            words_text, cost = rest.split("]", 1)
            src, dest, label = (int(x) for x in head.split())
            words = [int(w) for w in words_text.split()]
            cost = cost.strip() or "0"
            rows.append((src, dest, label, words, cost))
            num_states = max(num_states, src + 1, dest + 1)
        else:
            f = line.split()
            finals.append(f)
            num_states = max(num_states, int(f[0]) + 1)
    out = []
    next_state = num_states
    for src, dest, label, words, cost in rows:
        words = words or [0]
        chain = [src] + [next_state + k for k in range(len(words) - 1)] + [dest]
        next_state += len(words) - 1
        for k, word in enumerate(words):
            ilabel = label + 1 if k == 0 else 0
            weight = cost if k == 0 else "0"
            out.append(f"{chain[k]} {chain[k + 1]} {ilabel} {word} {weight}")
    out.extend(" ".join(f) for f in finals)
    return "\n".join(out) + "\n"


def main():
    try:
        import kaldi_decoder
        import kaldifst
    except Exception as e:  # noqa: BLE001
        skip(CRATE, PEER, f"import kaldi_decoder failed: {e}")
        return
    import numpy as np

    words = size(5000, 10)
    path = os.path.join(bench_dir(), f"hlg_{words}.txt")
    if not os.path.exists(path):
        skip(CRATE, PEER, f"decode_hlg: {path} missing (the Rust bench `decode` writes it)")
        return
    with open(path) as f:
        fst = kaldifst.compile(kaldi_graph_text(f.read()), acceptor=False,
                               keep_state_numbering=True)
    n, t, c = 16, size(500, 5), NUM_PHONES + 1
    logits, lengths, _ = ctc_input(n, t, c, min(50, t // 5), min(120, t // 4), 14)
    z = logits.astype(np.float64)
    z = z - z.max(axis=2, keepdims=True)
    log_probs = (z - np.log(np.exp(z).sum(axis=2, keepdims=True))).astype(np.float32)
    utterances = [np.ascontiguousarray(log_probs[i, : lengths[i]]) for i in range(n)]
    options = kaldi_decoder.FasterDecoderOptions(beam=20.0, max_active=10000, min_active=30)
    decoder = kaldi_decoder.FasterDecoder(fst, options)

    def decode():
        paths = []
        for u in utterances:
            decoder.decode(kaldi_decoder.DecodableCtc(u))
            paths.append(decoder.get_best_path()[1])
        return paths

    ours_path = os.path.join(bench_dir(), f"best_{words}.txt")
    warm = os.path.exists(ours_path)
    if warm:
        with open(ours_path) as f:
            ours = [[int(w) for w in line.split()] for line in f.read().splitlines()]
        theirs = []
        for best in decode():
            ok, _, olabels, _ = kaldifst.get_linear_symbol_sequence(best)
            theirs.append([w for w in olabels if w > 0] if ok else None)
        same = sum(a == b for a, b in zip(ours, theirs))
        print(f"{CRATE}: decode_hlg: Kaldi's best word sequences equal ours for {same} of "
              f"{n} utterances", file=sys.stderr)
    version = package_version("kaldi-decoder")
    repeats = 3 if QUICK else 5
    report(CRATE, "decode_hlg_t1", PEER, time_it(decode, repeats, warm=warm), version)


if __name__ == "__main__":
    main()
