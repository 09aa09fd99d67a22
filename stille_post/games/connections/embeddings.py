"""Word embeddings for the semantic bots, loaded offline from the `wordllama` wheel.

wordllama 0.4.x ships its 256-dimension token embeddings (`weights/
l2_supercat_256.safetensors`, 32,000 x 256, fp16) and its tokenizer
(`tokenizers/l2_supercat_tokenizer_config.json`) inside the wheel. Its own
`WordLlama.load()` looks for the tokenizer under `tokenizer/` (not `tokenizers/`) and
then downloads it from a model hub; and importing `wordllama` calls
`logging.basicConfig(level=INFO)` (undone here: providers/logsafety.py). So this module
reads the two shipped files itself, with
`tokenizers` and `safetensors` (wordllama's own dependencies), and pools the same way
wordllama does (the mean of the token vectors). Nothing is fetched, ever: a missing
file is an error naming the package.
"""

from __future__ import annotations

from functools import lru_cache
from importlib import resources
from typing import Any

import numpy as np

WEIGHTS = "weights/l2_supercat_256.safetensors"
TOKENIZER = "tokenizers/l2_supercat_tokenizer_config.json"
DIM = 256


class Embeddings:
    """Unit-length vectors for words and clue texts, cached per word."""

    def __init__(self, matrix: np.ndarray, tokenizer: Any) -> None:
        self.matrix = matrix
        self.tokenizer = tokenizer
        self._cache: dict[str, np.ndarray] = {}

    def embed(self, texts: list[str]) -> np.ndarray:
        missing = [t for t in dict.fromkeys(texts) if t not in self._cache]
        if missing:
            self._cache.update(zip(missing, self._vectors(missing), strict=True))
        if not texts:
            return np.zeros((0, self.matrix.shape[1]), dtype=np.float32)
        return np.stack([self._cache[t] for t in texts])

    def _vectors(self, texts: list[str]) -> list[np.ndarray]:
        """Each text's unit-length mean token vector, bit for bit what one text at a time
        gives (`matrix[ids].mean(axis=0)`, then `/ linalg.norm`), in batches of texts with
        the same number of tokens, so the semantic bots' clue vocabulary is embedded in a
        few numpy calls instead of one per word."""
        encs = self.tokenizer.encode_batch(texts, add_special_tokens=False)
        rows = self.matrix.shape[0]
        ids = [[i for i in enc.ids if 0 <= i < rows] for enc in encs]
        by_length: dict[int, list[int]] = {}
        for k, row in enumerate(ids):
            by_length.setdefault(len(row), []).append(k)
        means = np.zeros((len(texts), DIM), np.float32)
        for length, which in by_length.items():
            if length:  # no known token: the zero vector
                tokens = self.matrix[np.array([ids[k] for k in which])]  # (n, length, DIM)
                # Summed in token order as mean() sums, then divided as mean() divides.
                means[which] = tokens.sum(axis=1) / np.float32(length)
        # linalg.norm of one vector is sqrt(v.dot(v)); dot per row keeps its rounding.
        norms = np.sqrt(np.array([v.dot(v) for v in means], np.float32))
        unit = means / np.where(norms > 0, norms, np.float32(1))[:, None]
        return list(unit)

    def vector(self, text: str) -> np.ndarray:
        return self.embed([text])[0]


@lru_cache(maxsize=1)
def load() -> Embeddings:
    from safetensors import safe_open
    from tokenizers import Tokenizer

    from stille_post.providers.logsafety import preserve_logging

    with preserve_logging():  # importing wordllama calls logging.basicConfig(level=INFO)
        root = resources.files("wordllama")
    weights, tok = root.joinpath(WEIGHTS), root.joinpath(TOKENIZER)
    if not weights.is_file() or not tok.is_file():
        raise FileNotFoundError("the wordllama wheel lacks its shipped weights or tokenizer "
                                f"({WEIGHTS}, {TOKENIZER}); reinstall wordllama==0.4.0.post1")
    with resources.as_file(weights) as wpath, safe_open(str(wpath), framework="np") as f:
        matrix = np.ascontiguousarray(f.get_tensor("embedding.weight").astype(np.float32))
    with resources.as_file(tok) as tpath:
        tokenizer = Tokenizer.from_file(str(tpath))
    tokenizer.no_padding()
    tokenizer.no_truncation()
    return Embeddings(matrix, tokenizer)
