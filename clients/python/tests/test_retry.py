"""Offline tests of the retry policy's waits and limits (kiln_client.retry)."""

import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from kiln_client import NO_RETRIES, RetryPolicy  # noqa: E402


class RetryPolicyTest(unittest.TestCase):
    def test_waits_double_up_to_the_cap(self):
        policy = RetryPolicy(first_delay_s=0.1, max_delay_s=0.5, jitter=0)
        self.assertEqual([policy.delay(n) for n in range(1, 6)], [0.1, 0.2, 0.4, 0.5, 0.5])

    def test_jitter_only_shortens_a_wait(self):
        policy = RetryPolicy(first_delay_s=1, jitter=0.5)
        self.assertEqual(policy.delay(1, rng=lambda: 0.0), 1.0)
        self.assertEqual(policy.delay(1, rng=lambda: 1.0), 0.5)

    def test_retry_after_is_a_floor(self):
        policy = RetryPolicy(first_delay_s=0.1, jitter=0)
        self.assertEqual(policy.delay(1, retry_after=3), 3.0)
        self.assertEqual(policy.delay(1, retry_after=0), 0.1)

    def test_stops_after_max_attempts(self):
        policy = RetryPolicy(max_attempts=3, jitter=0)
        self.assertIsNotNone(policy.next_wait(1, 0))
        self.assertIsNotNone(policy.next_wait(2, 0))
        self.assertIsNone(policy.next_wait(3, 0))
        self.assertIsNone(NO_RETRIES.next_wait(1, 0))

    def test_stops_when_the_wait_would_pass_the_time_budget(self):
        policy = RetryPolicy(max_total_s=10, jitter=0)
        self.assertEqual(policy.next_wait(1, 4.0, retry_after=5), 5.0)
        self.assertIsNone(policy.next_wait(1, 6.0, retry_after=5))
        self.assertIsNone(policy.next_wait(1, 0.0, retry_after=11))

    def test_rejects_nonsense(self):
        for bad in ({"max_attempts": 0}, {"first_delay_s": -1}, {"jitter": 2}):
            with self.subTest(bad=bad), self.assertRaises(ValueError):
                RetryPolicy(**bad)


if __name__ == "__main__":
    unittest.main()
