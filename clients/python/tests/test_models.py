"""Answers are typed models with datetimes; the namespaces mirror the routes; the client reads its environment."""
import asyncio
import os
import unittest
from datetime import datetime, timezone
from unittest import mock

from lab_service import AsyncLabService, LabService, NotFoundError, models

from support import API_KEY, BASE_URL, LAB_ID, needs_server, unique


@needs_server
class ModelsTest(unittest.TestCase):
    def setUp(self) -> None:
        self.client = LabService(API_KEY, BASE_URL, lab_id=LAB_ID)

    def test_answers_are_dataclasses_with_datetimes(self) -> None:
        task = self.client.tasks.create(title=unique("typed"), description="from Python")
        self.assertIsInstance(task, models.Task)
        self.assertIsInstance(task.created_at, datetime)
        self.assertEqual(task.created_at.tzinfo, timezone.utc)
        self.assertEqual(task.lab_id, LAB_ID)
        self.assertEqual(task.raw["labId"], LAB_ID)

    def test_namespaces_mirror_the_routes(self) -> None:
        name = unique("queue")
        queue = self.client.experiments.queues.create(name=name)
        self.assertIn(queue.id, [q.id for q in self.client.experiments.queues.list()])
        written = self.client.files.write(path=f"/notes/{name}.md", content="hello")
        self.assertEqual(self.client.files.read(path=written.path).content, "hello")
        with self.assertRaises(NotFoundError):
            self.client.sync.status()  # the test lab has no linked repository

    def test_defaults_come_from_the_environment(self) -> None:
        env = {"LAB_SERVICE_API_KEY": API_KEY, "LAB_SERVICE_BASE_URL": BASE_URL, "LAB_SERVICE_LAB_ID": LAB_ID}
        with mock.patch.dict(os.environ, env):
            client = LabService()
        self.assertEqual(client.tasks.list(limit=1).first_page().items[0].lab_id, LAB_ID)
        with mock.patch.dict(os.environ, {"LAB_SERVICE_API_KEY": ""}):
            with self.assertRaises(ValueError):
                LabService(base_url=BASE_URL)

    def test_the_async_client_answers_the_same(self) -> None:
        async def run() -> models.Task:
            client = AsyncLabService(API_KEY, BASE_URL, lab_id=LAB_ID)
            return await client.tasks.create(title=unique("async"))

        task = asyncio.run(run())
        self.assertIsInstance(task.created_at, datetime)
