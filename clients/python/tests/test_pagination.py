"""A list call yields every item across pages when iterated; one page at a time stays possible."""
import asyncio
import unittest

from lab_service import AsyncLabService, LabService, Page

from support import API_KEY, BASE_URL, LAB_ID, needs_server, unique


@needs_server
class PaginationTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.client = LabService(API_KEY, BASE_URL, lab_id=LAB_ID)
        cls.prefix = f"/{unique('pages')}"
        cls.paths = sorted(f"{cls.prefix}/note-{n}.md" for n in range(8))
        for path in cls.paths:
            cls.client.files.write(path=path, content=f"# {path}")

    def test_iterating_walks_every_page(self) -> None:
        pages = list(self.client.files.list(prefix=self.prefix, limit=3).pages())
        self.assertEqual([len(p.items) for p in pages], [3, 3, 2])
        self.assertEqual([p.has_more for p in pages], [True, True, False])
        walked = [f.path for f in self.client.files.list(prefix=self.prefix, limit=3)]
        self.assertEqual(walked, self.paths)

    def test_one_page_at_a_time(self) -> None:
        first = self.client.files.list(prefix=self.prefix, limit=3).first_page()
        self.assertIsInstance(first, Page)
        self.assertEqual([f.path for f in first.items], self.paths[:3])
        self.assertTrue(first.has_more)
        self.assertIsNotNone(first.next_cursor)
        self.assertTrue(str(first.request_id).startswith("req_"))
        second = self.client.files.list(prefix=self.prefix, limit=3, cursor=first.next_cursor).first_page()
        self.assertEqual([f.path for f in second.items], self.paths[3:6])
        rest = [f.path for f in self.client.files.list(prefix=self.prefix, limit=3, cursor=first.next_cursor)]
        self.assertEqual(rest, self.paths[3:])

    def test_async_for_walks_every_page(self) -> None:
        async def walk() -> list:
            client = AsyncLabService(API_KEY, BASE_URL, lab_id=LAB_ID)
            return [f.path async for f in client.files.list(prefix=self.prefix, limit=3)]

        self.assertEqual(asyncio.run(walk()), self.paths)
