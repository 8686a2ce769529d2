"""Lists by cursor: iterate a list call for every item across pages, or take one page at a time (written by hand)."""
from dataclasses import dataclass, field
from typing import Any, AsyncIterator, Awaitable, Callable, Generic, Iterator, List, Mapping, Optional, TypeVar

from .transport import HttpResponse

T = TypeVar("T")


@dataclass(frozen=True)
class Page(Generic[T]):
    """One page of a list: its items, and the cursor of the next page (None on the last)."""

    items: List[T]
    next_cursor: Optional[str]
    has_more: bool
    request_id: Optional[str] = None
    meta: Mapping[str, Any] = field(default_factory=dict, repr=False)
    """the page's whole meta, for lists that say more (meta.totals of experiments.list_costs)"""


def page_of(response: HttpResponse, item: Callable[[Any], T]) -> Page[T]:
    body = response.body if isinstance(response.body, dict) else {}
    meta = body.get("meta") if isinstance(body.get("meta"), dict) else {}
    data = body.get("data") if isinstance(body.get("data"), list) else []
    cursor = meta.get("next_cursor")
    return Page(
        items=[item(value) for value in data],
        next_cursor=cursor if isinstance(cursor, str) else None,
        has_more=bool(meta.get("has_more")) and isinstance(cursor, str),
        request_id=response.headers.get("x-request-id"),
        meta=meta,
    )


class Paginator(Generic[T]):
    """What a list call returns. `for item in client.tasks.list()` fetches page after page as it goes;
    `first_page()` fetches one, and `list(cursor=page.next_cursor)` resumes after it. Nothing is fetched
    before you iterate or ask for a page, so errors surface there."""

    def __init__(self, fetch: Callable[[Optional[str]], Page[T]], cursor: Optional[str] = None) -> None:
        self._fetch = fetch
        self._cursor = cursor

    def first_page(self) -> Page[T]:
        return self._fetch(self._cursor)

    def pages(self) -> Iterator[Page[T]]:
        page = self._fetch(self._cursor)
        yield page
        while page.has_more and page.next_cursor is not None:
            page = self._fetch(page.next_cursor)
            yield page

    def __iter__(self) -> Iterator[T]:
        for page in self.pages():
            yield from page.items

    def to_list(self) -> List[T]:
        """Every item of every page."""
        return list(self)


class AsyncPaginator(Generic[T]):
    """As Paginator, for asyncio: `async for item in client.tasks.list()`, `await first_page()`."""

    def __init__(self, fetch: Callable[[Optional[str]], Awaitable[Page[T]]], cursor: Optional[str] = None) -> None:
        self._fetch = fetch
        self._cursor = cursor

    async def first_page(self) -> Page[T]:
        return await self._fetch(self._cursor)

    async def pages(self) -> AsyncIterator[Page[T]]:
        page = await self._fetch(self._cursor)
        yield page
        while page.has_more and page.next_cursor is not None:
            page = await self._fetch(page.next_cursor)
            yield page

    async def __aiter__(self) -> AsyncIterator[T]:
        async for page in self.pages():
            for item in page.items:
                yield item

    async def to_list(self) -> List[T]:
        return [item async for item in self]
