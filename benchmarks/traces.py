"""Seeded token traces of a chat-like workload, for prefix-cache benchmarks.

The workload the chapter motivates: a deployment serves a few shared system
prompts, many users chat at the same time, and every request resends its whole
conversation. A trace is a sequence of requests, each a tuple of token ids:

    request = system prompt + the earlier turns of its conversation + a new turn

and a later request of a conversation starts with the *whole* sequence of that
conversation's previous request. Concretely, ``concurrency`` users each hold
one conversation at a time; each request comes from a user picked at random; a
user whose conversation has used up its turns starts a new one on a system
prompt picked with Zipf-like popularity (prompt ``i`` has weight ``1/(i+1)``).

Everything is drawn from one ``random.Random(seed)``, so a seed fixes the
trace exactly, on every machine and Python version that keeps ``random``'s
documented reproducibility for ``randrange``, ``choices`` and ``randint``.

>>> trace = make_trace(seed=1, requests=50)
>>> len(trace.requests), len(trace.system_prompts)
(50, 20)
>>> trace == make_trace(seed=1, requests=50)
True
>>> later = [r for r in trace.requests if r.extends is not None][0]
>>> earlier = trace.requests[later.extends]
>>> later.tokens[: len(earlier.tokens)] == earlier.tokens
True
"""

from __future__ import annotations

import random
from dataclasses import dataclass

__all__ = ["Request", "Trace", "make_trace"]


@dataclass(frozen=True)
class Request:
    """One request of a trace: its tokens and where they come from."""

    tokens: tuple[int, ...]
    """The whole sequence: system prompt, earlier turns, the new turn."""
    prompt: int
    """Index of its system prompt in ``Trace.system_prompts``."""
    conversation: int
    """Its conversation, numbered from 0 in order of first request."""
    extends: int | None
    """Index of the conversation's previous request, whose whole sequence this
    one starts with; ``None`` for a conversation's first request."""


@dataclass(frozen=True)
class Trace:
    """A reproducible chat workload: the shared system prompts and the requests."""

    seed: int
    vocab_size: int
    system_prompts: tuple[tuple[int, ...], ...]
    requests: tuple[Request, ...]

    @property
    def requested_tokens(self) -> int:
        """Tokens over all requests, counted every time they are sent."""
        return sum(len(request.tokens) for request in self.requests)

    @property
    def distinct_tokens(self) -> int:
        """Tokens of the trie of all requests: what a cache that never evicts would hold.

        Every system prompt that some request uses, plus each request's part
        after the sequence it extends (or after its system prompt).
        """
        used = {request.prompt for request in self.requests}
        total = sum(len(self.system_prompts[p]) for p in used)
        for request in self.requests:
            if request.extends is None:
                total += len(request.tokens) - len(self.system_prompts[request.prompt])
            else:
                total += len(request.tokens) - len(self.requests[request.extends].tokens)
        return total

    @property
    def conversations(self) -> int:
        """The number of conversations in the trace."""
        return 1 + max((request.conversation for request in self.requests), default=-1)


@dataclass
class _Conversation:
    number: int
    prompt: int
    last_request: int | None
    tokens: tuple[int, ...]
    turns_left: int


def make_trace(
    seed: int = 0,
    *,
    requests: int = 2_000,
    prompts: int = 20,
    prompt_tokens: tuple[int, int] = (1_000, 2_000),
    turn_tokens: tuple[int, int] = (32, 256),
    turns: tuple[int, int] = (1, 9),
    concurrency: int = 32,
    vocab_size: int = 32_000,
) -> Trace:
    """Draw a chat trace from ``random.Random(seed)``.

    ``prompt_tokens``, ``turn_tokens`` and ``turns`` are inclusive ranges for
    the length of a system prompt, of one new turn (an assistant reply and the
    next user message, as the model sees them) and the number of requests of a
    conversation. ``concurrency`` users chat at once. Token ids are uniform in
    ``range(vocab_size)``, so two texts agree only where the trace makes them
    share a prefix.
    """
    if requests < 0 or prompts < 1 or concurrency < 1 or vocab_size < 1:
        raise ValueError("requests >= 0, prompts >= 1, concurrency >= 1, vocab_size >= 1")
    rng = random.Random(seed)

    def text(length_range: tuple[int, int]) -> tuple[int, ...]:
        return tuple(rng.randrange(vocab_size) for _ in range(rng.randint(*length_range)))

    system_prompts = tuple(text(prompt_tokens) for _ in range(prompts))
    popularity = [1 / (rank + 1) for rank in range(prompts)]
    users: list[_Conversation | None] = [None] * concurrency
    started = 0
    made: list[Request] = []
    for index in range(requests):
        user = rng.randrange(concurrency)
        conversation = users[user]
        if conversation is None or conversation.turns_left == 0:
            prompt = rng.choices(range(prompts), weights=popularity)[0]
            conversation = _Conversation(
                number=started,
                prompt=prompt,
                last_request=None,
                tokens=system_prompts[prompt],
                turns_left=rng.randint(*turns),
            )
            users[user] = conversation
            started += 1
        tokens = conversation.tokens + text(turn_tokens)
        made.append(
            Request(
                tokens=tokens,
                prompt=conversation.prompt,
                conversation=conversation.number,
                extends=conversation.last_request,
            )
        )
        conversation.tokens, conversation.last_request = tokens, index
        conversation.turns_left -= 1
    return Trace(
        seed=seed,
        vocab_size=vocab_size,
        system_prompts=system_prompts,
        requests=tuple(made),
    )
