"""When and how long the client waits before sending a request again.

What may be retried (schema/openapi.yaml):
  * a 503 answer: kiln answers 503 only for work it refused before doing it
    (overloaded, pool_saturated, host_memory_busy, tune_queue_full, draining,
    store_busy, a connection over the cap), so any request may be sent again,
    after at least the answer's Retry-After;
  * a connection that failed before the request was fully sent (connect
    refused or timed out, reset while sending): the server cannot have acted;
  * a connection lost while waiting for the answer, only for requests the API
    makes safe to repeat (Request.idempotent: compiles are idempotent by key,
    fetches, explains and runs change nothing). Deleting an entry or starting a
    tuning job is not repeated then: it may have been applied.
A timeout waiting for an answer is never retried: the server may still be
working on it, and the caller's timeout is its bound.

Waits grow exponentially (first_delay_s, doubling, at most max_delay_s, with
jitter), are at least the server's Retry-After, and stop after max_attempts
sends or when the next wait would end past max_total_s from the first send;
then the last error is raised. A RetryPolicy is an immutable value.
"""

import random
from dataclasses import dataclass


@dataclass(frozen=True)
class RetryPolicy:
    max_attempts: int = 5         # sends in all, the first included; 1 = never retry
    max_total_s: float = 60.0     # no retry starts later than this after the first send
    first_delay_s: float = 0.1
    max_delay_s: float = 10.0
    jitter: float = 0.5           # a wait is drawn from [(1 - jitter) * d, d]

    def __post_init__(self):
        if self.max_attempts < 1:
            raise ValueError(f"max_attempts must be at least 1, got {self.max_attempts}")
        if min(self.max_total_s, self.first_delay_s, self.max_delay_s) < 0 or not 0 <= self.jitter <= 1:
            raise ValueError("retry delays must be non-negative and jitter within [0, 1]")

    def delay(self, retry, retry_after=None, rng=random.random):
        """Seconds to wait before retry number `retry` (1 = the first retry)."""
        backoff = min(self.max_delay_s, self.first_delay_s * (2 ** (retry - 1)))
        backoff *= 1 - self.jitter * rng()
        return max(backoff, float(retry_after or 0))

    def next_wait(self, attempts_made, elapsed_s, retry_after=None):
        """The wait before another send, or None when the policy says stop."""
        if attempts_made >= self.max_attempts:
            return None
        wait = self.delay(attempts_made, retry_after)
        if elapsed_s + wait > self.max_total_s:
            return None
        return wait


NO_RETRIES = RetryPolicy(max_attempts=1)
