"""The Python twin of `benches/src/graphs.rs`: the seeded lexicon L and bigram grammar G as
OpenFst text, byte for byte what the Rust side writes (see that file for the layout)."""

import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
from common import SplitMix64  # noqa: E402


def _cost(rng):
    milli = 500 + rng.below(9500)
    return f"{milli // 1000}.{milli % 1000:03d}"


def lexicon_text(num_words, num_phones, seed):
    """L as OpenFst transducer text (`src dest phone word cost`, final line `0 0.000`)."""
    lengths = SplitMix64(seed)
    phones = SplitMix64(seed + 1)
    disambig0 = num_phones + 1
    word0 = num_words + 1
    prons, disambig, seen = [], [], {}
    for _ in range(num_words):
        n = 2 + lengths.below(9)
        pron = tuple(1 + phones.below(num_phones) for _ in range(n))
        seen[pron] = seen.get(pron, 0) + 1
        disambig.append(disambig0 + seen[pron])
        prons.append(pron)
    out = []
    next_state = 1
    first_states = []
    for w, pron in enumerate(prons):
        first_states.append(next_state)
        out.append(f"0 {next_state} {pron[0]} {w + 1} 0.000\n")
        next_state += len(pron)
    out.append(f"0 0 {disambig0} {word0} 0.000\n")
    for w, pron in enumerate(prons):
        first = first_states[w]
        for i in range(1, len(pron)):
            out.append(f"{first + i - 1} {first + i} {pron[i]} 0 0.000\n")
        out.append(f"{first + len(pron) - 1} 0 {disambig[w]} 0 0.000\n")
    out.append("0 0.000\n")
    return "".join(out)


def grammar_text(num_words, seed):
    """G as OpenFst acceptor text (`src dest word cost`, then final lines)."""
    draws = SplitMix64(seed + 2)
    costs = SplitMix64(seed + 3)
    finals = SplitMix64(seed + 4)
    backoff = num_words + 1
    out = []
    for w in range(1, num_words + 1):
        out.append(f"0 {w} {w} {_cost(costs)}\n")
    for h in range(1, num_words + 1):
        k = 1 + draws.below(26)
        words = sorted({1 + draws.below(num_words) for _ in range(k)})
        for w in words:
            out.append(f"{h} {w} {w} {_cost(costs)}\n")
        out.append(f"{h} 0 {backoff} {_cost(costs)}\n")
    for s in range(num_words + 1):
        out.append(f"{s} {_cost(finals)}\n")
    return "".join(out)


if __name__ == "__main__":
    # prints a small L and G, to compare with the Rust side by hand
    print(lexicon_text(3, 5, 7), end="")
    print(grammar_text(4, 3), end="")
