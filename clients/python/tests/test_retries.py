"""Retries of 429, 503 and dropped connections (with one idempotency key for every attempt), and timeouts."""
import asyncio
import unittest

from lab_service import AsyncLabService, ConflictError, LabService, RateLimitedError, ServiceUnavailableError, TimeoutError

from support import API_KEY, BASE_URL, LAB_ID, Clock, Proxy, forward, needs_server, unique


def first_then_forward(answer):  # type: ignore[no-untyped-def]
    return lambda n: answer if n == 0 else ("forward", 0, {})


@needs_server
class RetryTest(unittest.TestCase):
    def client_through(self, proxy: Proxy, **options) -> LabService:  # type: ignore[no-untyped-def]
        return LabService(API_KEY, proxy.url, lab_id=LAB_ID, retry_initial_delay=0.05, **options)

    def tasks_titled(self, title: str) -> list:
        direct = LabService(API_KEY, BASE_URL, lab_id=LAB_ID)
        return [t for t in direct.tasks.list(limit=100) if t.title == title]

    def test_a_429_is_retried_after_its_retry_after(self) -> None:
        with Proxy(BASE_URL, first_then_forward(("answer", 429, {"Retry-After": "1"}))) as proxy:
            title = unique("after-429")
            with Clock() as clock:
                task = self.client_through(proxy).tasks.create(title=title)
            self.assertEqual(task.title, title)
            self.assertGreaterEqual(clock.seconds, 1.0)
            self.assertEqual(len(proxy.seen), 2)
            keys = {key for _, _, key in proxy.seen}
            self.assertEqual(len(keys), 1)
            self.assertIsNotNone(keys.pop())
        self.assertEqual(len(self.tasks_titled(title)), 1)

    def test_a_429_without_retries_left_is_raised_with_retry_after(self) -> None:
        with Proxy(BASE_URL, lambda n: ("answer", 429, {"Retry-After": "7"})) as proxy:
            with self.assertRaises(RateLimitedError) as raised:
                self.client_through(proxy).tasks.list(max_retries=0).first_page()
            self.assertEqual(raised.exception.retry_after, 7.0)
            self.assertEqual(len(proxy.seen), 1)

    def test_a_dropped_connection_is_retried_without_a_second_record(self) -> None:
        with Proxy(BASE_URL, lambda n: ("drop", 0, {}) if n == 0 else ("forward", 0, {})) as proxy:
            title = unique("after-drop")
            task = self.client_through(proxy).tasks.create(title=title)
            self.assertEqual(task.title, title)
            self.assertEqual(len(proxy.seen), 2)
            self.assertEqual(proxy.seen[0][2], proxy.seen[1][2])
        tasks = self.tasks_titled(title)
        self.assertEqual([t.id for t in tasks], [task.id])

    def test_the_callers_idempotency_key_is_the_one_sent(self) -> None:
        with Proxy(BASE_URL, forward) as proxy:
            title = unique("keyed")
            client = self.client_through(proxy)
            first = client.tasks.create(title=title, idempotency_key=f"key-{title}")
            again = client.tasks.create(title=title, idempotency_key=f"key-{title}")
            self.assertEqual(first.id, again.id)
            self.assertEqual([key for _, _, key in proxy.seen], [f"key-{title}"] * 2)
        self.assertEqual(len(self.tasks_titled(title)), 1)

    def test_retries_are_bounded_per_client_and_per_call(self) -> None:
        with Proxy(BASE_URL, lambda n: ("answer", 503, {"Retry-After": "0"})) as proxy:
            with self.assertRaises(ServiceUnavailableError):
                self.client_through(proxy).tasks.list().first_page()
            self.assertEqual(len(proxy.seen), 3)  # the first attempt and 2 retries, the default
            with self.assertRaises(ServiceUnavailableError):
                self.client_through(proxy, max_retries=1).tasks.list().first_page()
            self.assertEqual(len(proxy.seen), 5)
            with self.assertRaises(ServiceUnavailableError):
                self.client_through(proxy, max_retries=1).tasks.list(max_retries=3).first_page()
            self.assertEqual(len(proxy.seen), 9)

    def test_a_503_is_retried(self) -> None:
        with Proxy(BASE_URL, first_then_forward(("answer", 503, {}))) as proxy:
            self.client_through(proxy).tasks.list().first_page()
            self.assertEqual(len(proxy.seen), 2)

    def test_a_409_is_retried_only_when_it_says_when(self) -> None:
        # the service's answer while the first attempt under the same key still runs
        with Proxy(BASE_URL, first_then_forward(("answer", 409, {"Retry-After": "0"}))) as proxy:
            self.client_through(proxy).tasks.create(title=unique("after-409"))
            self.assertEqual(len(proxy.seen), 2)
        with Proxy(BASE_URL, first_then_forward(("answer", 409, {}))) as proxy:
            with self.assertRaises(ConflictError):
                self.client_through(proxy).tasks.create(title=unique("conflict"))
            self.assertEqual(len(proxy.seen), 1)

    def test_async_client_retries_too(self) -> None:
        async def create(url: str, title: str):  # type: ignore[no-untyped-def]
            client = AsyncLabService(API_KEY, url, lab_id=LAB_ID, retry_initial_delay=0.05)
            return await client.tasks.create(title=title)

        with Proxy(BASE_URL, lambda n: ("drop", 0, {}) if n == 0 else ("forward", 0, {})) as proxy:
            title = unique("async-drop")
            task = asyncio.run(create(proxy.url, title))
            self.assertEqual(len(proxy.seen), 2)
        self.assertEqual([t.id for t in self.tasks_titled(title)], [task.id])


@needs_server
class TimeoutTest(unittest.TestCase):
    def test_a_slow_answer_times_out_per_client_and_per_call(self) -> None:
        with Proxy(BASE_URL, lambda n: ("delay", 1.5, {})) as proxy:
            client = LabService(API_KEY, proxy.url, lab_id=LAB_ID, timeout=0.3, max_retries=0)
            with Clock() as clock:
                with self.assertRaises(TimeoutError) as raised:
                    client.tasks.list().first_page()
            self.assertLess(clock.seconds, 1.2)
            self.assertEqual(raised.exception.code, "timeout")
            # the call's own timeout wins over the client's
            page = client.tasks.list(timeout=10).first_page()
            self.assertIsNotNone(page.request_id)
            with self.assertRaises(TimeoutError):
                LabService(API_KEY, proxy.url, lab_id=LAB_ID, max_retries=0).tasks.list(timeout=0.3).first_page()
