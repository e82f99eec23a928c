"""A function's output decoded while the function still writes it (streamed decoding).

A function that dumps a big ResourceList (ruamel, kyaml) writes it over seconds: parsing each
item as it arrives, on a thread of its own, hides the decode in the function's own time, where
decoding after the exit would add it to fnrun's. The runtime hands every stdout chunk to `feed`
(it only queues); the items are cut and parsed in fnrun's layout (`fastlist`), and what arrives
faster than it is parsed is kept and parsed on every core at the end, as `resourcelist.decode`
does. Anything the fast layout does not cover, any error, or a runtime that never calls `feed`
(a cache hit) leaves `result` None: the caller decodes the whole output the usual way, with the
usual errors. `run/output.py` decides when this applies."""

from __future__ import annotations

import codecs
import queue
import threading

from .. import workers as forking
from . import fastlist
from .resourcelist import Decoded

_DONE = b""
_BLOCK = 1 << 20  # what the decoder is fed at least at a time


class StreamedDecode:
    """One function run's stdout, decoded on a thread as it arrives (a context: closed on exit)."""

    def __init__(self, source: str, workers: int | None = None) -> None:
        """`workers`: FNRUN_WORKERS as the edge read it, for output that arrives faster than it is parsed."""
        self._source = source
        self._workers = workers
        self._chunks: queue.SimpleQueue[bytes] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._outcome: Decoded | None = None
        self._backlog = 0  # bytes queued and not yet taken by the thread
        self._ended = False  # the thread has taken the end of the output
        self._lock = threading.Lock()

    def feed(self, chunk: bytes) -> None:
        """Called by the runtime for each piece of stdout; never blocks, never raises."""
        if not chunk:
            return
        if self._thread is None:
            self._thread = threading.Thread(target=self._decode, name="fnrun-streamed-decode", daemon=True)
            self._thread.start()
        with self._lock:
            self._backlog += len(chunk)
        self._chunks.put(chunk)

    def result(self) -> Decoded | None:
        """The decoded output once stdout has ended; None when the caller must decode it itself."""
        if self._thread is None:
            return None
        self._chunks.put(_DONE)
        self._thread.join()
        return self._outcome

    def close(self) -> None:
        """Stop the thread when the run ends another way (a timeout, an interrupt)."""
        if self._thread is not None and self._thread.is_alive():
            self._chunks.put(_DONE)

    def __enter__(self) -> StreamedDecode:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def _decode(self) -> None:
        decoder = fastlist.FastDecoder(self._source)
        utf8 = codecs.getincrementaldecoder("utf-8")()
        partial, pending, size = "", [], 0
        try:
            while (chunk := self._chunks.get()) is not _DONE:
                with self._lock:
                    self._backlog -= len(chunk)
                    behind = self._backlog
                if not decoder.share_among and behind >= forking.MIN_BYTES_TO_SHARE:
                    # arriving faster than parsed (written at the end, all at once): keep the
                    # rest's items and parse them on every core at the end
                    decoder.share_among = forking.count(behind, forking.MIN_BYTES_TO_SHARE, self._workers)
                text = utf8.decode(chunk)
                pending.append(text)
                size += len(text)
                # Fed in blocks at least as big as what the decoder holds of the current item
                # (and of a line still open), so a huge item in small chunks is copied a bounded
                # number of times: linear, not quadratic, in its size.
                if size >= max(_BLOCK, len(decoder.buffer), len(partial)):
                    partial = fastlist.feed_lines(decoder, partial + "".join(pending))
                    pending, size = [], 0
            self._ended = True
            partial = fastlist.feed_lines(decoder, partial + "".join(pending) + utf8.decode(b"", final=True))
            if partial:
                decoder.feed(partial + "\n")
            items, config, results = decoder.finish()
            self._outcome = Decoded(items, config, results)
        except Exception:  # noqa: BLE001 - NotFast, bad YAML or UTF-8, anything: the usual decode runs instead
            self._outcome = None
            if not self._ended:
                while self._chunks.get() is not _DONE:  # so `result` and `close` never wait on it
                    pass
