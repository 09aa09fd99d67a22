"""Players that need no LLM. Each reads only its own observation and draws only from its
own rng (derived from the seed, its seat and its name), and answers through the same
tool calls an LLM seat makes, so the engine's validation is exercised for every move.

- frequency: picks and guesses common words that fit the prefix, sampling the ten most
  frequent allowed words in proportion to their frequency. It ignores clues: its clue
  says only that the word is common. The baseline every other bot must beat.
- semantic:  word embeddings shipped in the wordllama wheel (embeddings.py). As the
  clue-giver it tries a handful of mid-frequency words, builds a clue from each word's
  nearest common words, keeps one it can decode itself, and says that clue. As a guesser
  (or setter) it names the allowed word nearest to the clue. A persona biases it
  towards the words nearest its persona (the paper's §4.2 priming).
- adaptive:  semantic, plus the paper's §2 social model: a perceived discourse vector per
  other player, moved by +eta*v_w when that player got a clue word w and -eta*v_w when
  it missed, and +eta*v_w for a clue-giver's own word. Its clue words are chosen towards
  the guessers' average vector and away from the setter's.
- oracle:p=P (also oracle-pNN): a SIMULATION DEVICE, not a player. Its clue is an
  opaque token on a board shared by the game's oracle seats; each oracle seat then
  decodes it correctly with probability p, drawn from its own rng stream (one draw per
  guess, so games with different p share their draws: common random numbers). It exists
  to reproduce the paper's closed form (1-p)(1-(1-p)^(n-1)); games with it are marked.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from stille_post.core.rng import derive_rng
from stille_post.games.connections import prompts as P
from stille_post.games.connections import rules
from stille_post.games.connections.dictionary import Dictionary
from stille_post.games.connections.observation import ConnectionsObservation
from stille_post.players.base import Action, Decision, Player
from stille_post.providers.base import ToolCall

if TYPE_CHECKING:  # numpy is imported where vectors are used: the CLI starts without it
    import numpy as np


@dataclass
class OracleBoard:
    """The oracle seats' shared secret: which word each opaque clue stands for."""

    words: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class BotSetup:
    """What every bot may know when it sits down (public facts plus the shared board)."""

    dictionary: Dictionary
    setter: int
    guessers: tuple[int, ...]
    board: OracleBoard
    personas: dict[int, str]  # only the seats whose persona this bot may know


def _call(name: str, **args: str) -> Action:
    return Action(tool_calls=(ToolCall(name, dict(args), id=f"bot_{name}"),))


def safe_clue(word: str, templates: Sequence[str]) -> str:
    """The first template whose text does not contain `word` (rules.clue_error)."""
    for t in templates:
        text = t.format(n=len(word))
        if rules.clue_error(text, word) is None:
            return text
    return f"{len(word)} ?"  # unreachable for words of 3+ letters; digits hold no letters


@lru_cache(maxsize=8)
def _secret_pool(d: Dictionary) -> tuple[str, ...]:
    """Long, moderately common words: fair secret words for a bot setter."""
    pool = tuple(w for w in d.words if len(w) >= 7 and 2.5 <= d.zipf[w] <= 4.0)
    return pool or d.words


class ConnectionsBot:
    instant = True  # decide() never awaits: no deadline timer (players/base.is_instant)
    kind = "bot"
    plays_the_secret = True  # names the prefix once the Game Master says no letter is left

    def __init__(self, rng: random.Random, setup: BotSetup) -> None:
        self.rng = rng
        self.setup = setup
        self.d = setup.dictionary
        self.name = f"bot:{self.kind}"

    async def decide(self, decision: Decision[Any]) -> Action:
        obs: ConnectionsObservation = decision.observation
        if decision.kind == P.SECRET_WORD:
            return _call("choose_word", word=self.rng.choice(_secret_pool(self.d)))
        if decision.kind == P.CLUE:
            word, clue = self.clue(obs)
            return _call("give_clue", word=word, clue=clue)
        if decision.kind == P.GUESS:
            if obs.nothing_left and not obs.is_setter and self.plays_the_secret:
                # The Game Master said the prefix is the whole secret: the one clue word
                # that can still win is the secret, so a fellow guesser names it.
                return _call("guess", word=obs.prefix)
            return _call("guess", word=self.guess(obs))
        raise ValueError(f"unknown decision kind {decision.kind!r}")

    def allowed(self, obs: ConnectionsObservation, limit: int | None = None) -> list[str]:
        """Allowed words, most frequent first (a bot never proposes an invalid word)."""
        ex = obs.excluded
        out: list[str] = []
        for w in self.d.by_frequency(obs.prefix):
            if w not in ex:
                out.append(w)
                if limit is not None and len(out) >= limit:
                    break
        return out

    def frequent(self, obs: ConnectionsObservation, k: int = 10,
                 avoid: str | None = None) -> str:
        pool = [w for w in self.allowed(obs, k + 1) if w != avoid][:k] or self.allowed(obs, 1)
        if not pool:
            return obs.prefix  # nothing left: a re-ask (then a forfeit) tells the story
        weights = [10 ** self.d.zipf[w] for w in pool]
        return self.rng.choices(pool, weights)[0]

    def clue(self, obs: ConnectionsObservation) -> tuple[str, str]:
        raise NotImplementedError

    def guess(self, obs: ConnectionsObservation) -> str:
        raise NotImplementedError


class FrequencyBot(ConnectionsBot):
    kind = "frequency"

    def clue(self, obs: ConnectionsObservation) -> tuple[str, str]:
        # Once the Game Master says no letter is left, the prefix is the secret: clue it.
        word = obs.prefix if obs.nothing_left else self.frequent(obs)
        return word, safe_clue(word, ("a common word of {n} letters", "a frequent word",
                                      "very common, {n} long", "{n} letters"))

    def guess(self, obs: ConnectionsObservation) -> str:
        # A setter naming its own word can never block: it names something else.
        return self.frequent(obs, avoid=obs.secret)


# --- semantic ----------------------------------------------------------------------------

_CLUE_VOCAB_SIZE = 20_000
_CLUES: dict[tuple[Dictionary, str, str], str] = {}
_TOKEN = re.compile(r"[^\W\d_]+")


@lru_cache(maxsize=4)
def _clue_vocab(d: Dictionary) -> tuple[tuple[str, ...], np.ndarray]:
    """The common words a semantic clue is made of, with their vectors."""
    from stille_post.games.connections import embeddings

    words = most_frequent(d, _CLUE_VOCAB_SIZE)
    return words, embeddings.load().embed(list(words))


def most_frequent(d: Dictionary, k: int) -> tuple[str, ...]:
    """The `k` most frequent words, ties in alphabetical order: the same as sorting by
    (-frequency, word), without building a key per word (paid once per process that plays
    with semantic bots; docs/performance.md). `d.words` is
    alphabetical, so a stable sort on the frequency alone keeps ties in that order."""
    import numpy as np

    zipf = np.fromiter((d.zipf[w] for w in d.words), float, len(d.words))
    return tuple(d.words[int(i)] for i in np.argsort(-zipf, kind="stable")[:k])


class SemanticBot(ConnectionsBot):
    kind = "semantic"
    candidates_considered = 12  # clue words tried per clue
    clue_pool = 80  # ...drawn from this many allowed words, most frequent first
    skip_top = 3  # the most common words are the ones a setter blocks first
    guess_pool = 3000

    def __init__(self, rng: random.Random, setup: BotSetup, seat: int) -> None:
        super().__init__(rng, setup)
        from stille_post.games.connections import embeddings

        self.emb = embeddings.load()
        self.seat = seat
        persona = setup.personas.get(seat)
        self.self_vec = self.emb.vector(persona) if persona else None

    # how close a candidate is to a clue, for this bot
    def bias(self, words: Sequence[str], vecs: np.ndarray) -> np.ndarray:
        import numpy as np
        b = np.zeros(len(words), np.float32)
        if self.self_vec is not None:
            b += 0.15 * (vecs @ self.self_vec)
        return b

    def decode(self, clue: str, pool: Sequence[str],
               vecs: np.ndarray | None = None) -> str | None:
        """The pool word nearest to the clue (not a word of the clue itself)."""
        import numpy as np

        if not pool:
            return None
        if vecs is None:
            vecs = self.emb.embed(list(pool))
        said = {t.casefold() for t in _TOKEN.findall(clue)}
        zipf = self.d.zipf
        freq = np.fromiter((zipf[w] for w in pool), np.float32, len(pool))
        score = vecs @ self.emb.vector(clue) + 0.01 * freq + self.bias(pool, vecs)
        for i in np.argsort(-score)[:len(said) + 1]:
            if pool[int(i)] not in said:
                return pool[int(i)]
        return None

    def guess(self, obs: ConnectionsObservation) -> str:
        pool = [w for w in self.allowed(obs, self.guess_pool) if w != obs.secret]
        best = self.decode(obs.clue or "", pool) if obs.clue else None
        return best or self.frequent(obs, avoid=obs.secret)

    def make_clue(self, word: str, prefix: str) -> str:
        # A pure function of (dictionary, word, prefix): cached across attempts and games
        # (one matrix product over the clue vocabulary is the bot's main cost).
        key = (self.d, word, prefix)  # the object, not its id: an id can be reused
        if key not in _CLUES:
            _CLUES[key] = self._make_clue(word, prefix)
        return _CLUES[key]

    def _make_clue(self, word: str, prefix: str) -> str:
        import numpy as np

        vocab, vecs = _clue_vocab(self.d)
        sims = vecs @ self.emb.vector(word)
        picked: list[str] = []
        top = np.argpartition(-sims, 60)[:60]
        for i in top[np.argsort(-sims[top])]:
            w = vocab[int(i)]
            # No clue word that contains the word, is contained in it, shares its first
            # four letters (a spelled-out hint) or fits the prefix (a guess in itself).
            if word in w or w in word or w[:4] == word[:4] or w.startswith(prefix):
                continue
            picked.append(w)
            if len(picked) == 2:
                break
        text = " ".join(picked)
        return text if text and rules.clue_error(text, word) is None else \
            safe_clue(word, ("something starting like the prefix",))

    def rank_targets(self, obs: ConnectionsObservation, words: list[str]) -> list[float]:
        """Extra preference per candidate clue word (none for the plain semantic bot)."""
        return [0.0] * len(words)

    def clue(self, obs: ConnectionsObservation) -> tuple[str, str]:
        if obs.nothing_left:  # the prefix is the secret: the one clue word that wins
            return obs.prefix, self.make_clue(obs.prefix, obs.prefix)
        allowed = self.allowed(obs, self.clue_pool)
        pool = allowed[self.skip_top:] or allowed
        if not pool:
            word = self.frequent(obs)
            return word, safe_clue(word, ("no idea", "anything"))
        k = min(self.candidates_considered, len(pool))
        tried = self.rng.sample(pool, k)
        decode_pool = self.allowed(obs, self.guess_pool)
        pool_vecs = self.emb.embed(decode_pool)
        extra = self.rank_targets(obs, tried)
        best: tuple[float, str, str] | None = None
        for w, bonus in zip(tried, extra, strict=True):
            clue = self.make_clue(w, obs.prefix)
            ok = self.decode(clue, decode_pool, pool_vecs) == w
            key = (1.0 if ok else 0.0) + bonus
            if best is None or key > best[0]:
                best = (key, w, clue)
        assert best is not None
        return best[1], best[2]


class AdaptiveBot(SemanticBot):
    kind = "adaptive"
    eta = 0.5

    def __init__(self, rng: random.Random, setup: BotSetup, seat: int) -> None:
        import numpy as np

        super().__init__(rng, setup, seat)
        dim = self.emb.matrix.shape[1]
        # Perceived discourse vectors start at "common knowledge" (zero), or at a persona
        # the bot was told about (§4.2: players told of the others' priming).
        self.perceived: dict[int, np.ndarray] = {}
        for s in (setup.setter, *setup.guessers):
            if s == seat:
                continue
            p = setup.personas.get(s)
            self.perceived[s] = self.emb.vector(p).copy() if p else np.zeros(dim, np.float32)
        self.seen = 0

    def learn(self, obs: ConnectionsObservation) -> None:
        for rec in obs.history[self.seen:]:
            if rec.word is None:
                continue
            v = self.emb.vector(rec.word)
            for s, g in rec.guesses.items():
                if s in self.perceived and g is not None:
                    self.perceived[s] += self.eta * v if g == rec.word else -self.eta * v
            if rec.giver in self.perceived:
                self.perceived[rec.giver] += self.eta * v
        self.seen = len(obs.history)

    def rank_targets(self, obs: ConnectionsObservation, words: list[str]) -> list[float]:
        import numpy as np

        self.learn(obs)
        mates = [self.perceived[s] for s in obs.guessers if s in self.perceived]
        toward = np.mean(mates, axis=0) if mates else None
        away = self.perceived.get(obs.setter)
        vecs = self.emb.embed(words)
        score = np.zeros(len(words), np.float32)
        if toward is not None:
            score += vecs @ toward
        if away is not None:
            score -= vecs @ away
        return [float(x) for x in score]

    def guess(self, obs: ConnectionsObservation) -> str:
        self.learn(obs)
        return super().guess(obs)


# --- the oracle (a simulation device) -------------------------------------------------------

class OracleBot(ConnectionsBot):
    kind = "oracle"
    plays_the_secret = False  # it decodes with probability p, whatever the board says

    def __init__(self, seed: int | str, seat: int, setup: BotSetup, p: float) -> None:
        # Separate streams: the decode draw (one per guess, whatever p is) and the choice
        # of words, so a sweep over p keeps every agent's decode draws aligned.
        super().__init__(derive_rng(seed, "seat", seat, "oracle", "words"), setup)
        self.decode_rng = derive_rng(seed, "seat", seat, "oracle", "decode")
        self.p = p
        self.seat = seat
        self.name = f"bot:oracle:p={p:g}"

    def any_allowed(self, obs: ConnectionsObservation, avoid: str | None = None) -> str | None:
        words = self.d.with_prefix(obs.prefix)
        ex = obs.excluded
        for _ in range(50):  # rejection sampling: the excluded words are few
            w = self.rng.choice(words) if words else None
            if w is None:
                return None
            if w not in ex and w != avoid:
                return w
        rest = [w for w in words if w not in ex and w != avoid]
        return self.rng.choice(rest) if rest else None

    def clue(self, obs: ConnectionsObservation) -> tuple[str, str]:
        word = self.any_allowed(obs) or obs.prefix
        token = safe_clue(word, (f"oracle token {obs.attempt}.{self.seat}",
                                 f"token {obs.attempt}.{self.seat}",
                                 f"ref {obs.attempt}.{self.seat}"))
        self.setup.board.words[token] = word
        return word, token

    def guess(self, obs: ConnectionsObservation) -> str:
        target = self.setup.board.words.get(obs.clue or "")
        hit = self.decode_rng.random() < self.p
        if target is not None and hit:
            return target
        return self.any_allowed(obs, avoid=target) or target or obs.prefix


BotMaker = Callable[[random.Random, BotSetup, int], Player]

BOTS: dict[str, BotMaker] = {
    "frequency": lambda rng, setup, seat: FrequencyBot(rng, setup),
    "semantic": lambda rng, setup, seat: SemanticBot(rng, setup, seat),
    "adaptive": lambda rng, setup, seat: AdaptiveBot(rng, setup, seat),
}
# Registered oracle names, for seat specs that cannot carry a parameter.
ORACLE_NAMES = {f"oracle-p{pct:02d}": pct / 100 for pct in range(5, 100, 5)}
