"""The library's two bounded memo tables (amp.memo): least-recently-used eviction and clearing."""

from __future__ import annotations

import threading

from amp.memo import LruCache, Memo


def test_lru_keeps_the_most_recently_used_within_its_bound() -> None:
    cache: LruCache[str, int] = LruCache(2)
    cache.put("a", 1)
    cache.put("b", 2)
    assert cache.get("a") == 1  # a is now the most recent
    cache.put("c", 3)
    assert "b" not in cache and cache.get("a") == 1 and cache.get("c") == 3
    assert (cache.hits, cache.misses) == (3, 0)
    assert cache.get("b") is None and cache.misses == 1


def test_lru_reads_a_callable_bound_at_every_insertion() -> None:
    bound = [3]
    cache: LruCache[int, int] = LruCache(lambda: bound[0])
    for i in range(3):
        cache.put(i, i)
    bound[0] = 1
    cache.put(9, 9)
    assert len(cache) == 1 and cache.values() == [9]


def test_lru_computes_a_missing_value_once_and_is_safe_across_threads() -> None:
    cache: LruCache[int, int] = LruCache(1000)
    calls: list[int] = []

    def work(offset: int) -> None:
        for i in range(200):
            cache.get_or_compute(i, lambda i=i: calls.append(i) or i * 2)

    threads = [threading.Thread(target=work, args=(t,)) for t in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=10)
    assert all(cache.get(i) == i * 2 for i in range(200))
    assert len(calls) >= 200 and set(calls) == set(range(200))


def test_memo_computes_on_the_first_lookup_and_clears_when_full() -> None:
    calls: list[tuple[int, int]] = []

    def add(a: int, b: int) -> int:
        calls.append((a, b))
        return a + b

    memo = Memo(add, cap=3)
    assert memo[1, 2] == 3 and memo[1, 2] == 3 and calls == [(1, 2)]
    memo[2, 2], memo[3, 3]
    assert len(memo) == 3
    memo[4, 4]  # the table was full: cleared, then this one stored
    assert len(memo) == 1 and memo[4, 4] == 8 and calls[-1] == (4, 4)


def test_memo_of_one_parameter_takes_a_tuple_key_whole() -> None:
    memo = Memo(lambda stack: len(stack), cap=10)
    assert memo[(1, 2, 3)] == 3
