"""Plain data across the trust boundary: what a worker may send to the process that grades.

The worker runs the student's code, so everything it sends is untrusted input. It is encoded as a frame
of JSON (the structure) followed by raw bytes (the arrays), and decoded here without executing anything:
only ``None``, ``bool``, ``int``, ``float``, ``complex``, ``str``, lists, tuples, dicts with str or int
keys, NumPy arrays and scalars of plain dtypes (bool, integers, floats, complex) and
``np.random.Generator`` states come back, each rebuilt as its exact type. A frame that breaks any rule
raises :class:`WireError`; so does one past the size or depth limits.

The other direction (the grading process sends a call to the worker) is trusted and uses pickle.
"""
from __future__ import annotations

import json
import math
import struct
from typing import Any

import numpy as np

MAX_FRAME = 256 * 2**20  # bytes of one message: far above any answer of the homework, far below the memory
MAX_TEXT = 64 * 2**20  # bytes of its JSON part (numbers outside arrays, journals of environment calls)
MAX_DEPTH = 64  # nesting of lists, tuples and dicts
PLAIN_KINDS = "biufc"  # bool, signed and unsigned integers, floats, complex numbers
_HEADER = struct.Struct("<II")  # length of the JSON part, length of the binary part


class WireError(ValueError):
    """A frame that is not plain data, or not well formed."""


class Unsendable(TypeError):
    """The worker was asked to send something that is not plain data; the message names its type."""


# ---- encoding (runs in the worker) ------------------------------------------------------------------

def encode(value: Any) -> bytes:
    blobs: list[bytes] = []
    size = [0]
    tree = _enc(value, blobs, size, 0)
    text = json.dumps(tree, ensure_ascii=False, allow_nan=True, separators=(",", ":")).encode("utf-8")
    blob = b"".join(blobs)
    if len(text) > MAX_TEXT or len(text) + len(blob) > MAX_FRAME:
        raise Unsendable(f"слишком большой ответ: {(len(text) + len(blob)) / 2**20:.0f} МБ")
    return _HEADER.pack(len(text), len(blob)) + text + blob


def _dtype_name(dtype: np.dtype) -> str:
    return dtype.str  # e.g. "<f8", "|b1": byte order included


def _enc(x: Any, blobs: list[bytes], size: list[int], depth: int) -> Any:
    if depth > MAX_DEPTH:
        raise Unsendable("слишком глубокая вложенность списков и словарей")
    t = type(x)
    if x is None or t is bool or t is str:
        return x
    if t is int:
        return x if -2**53 < x < 2**53 else {"$int": str(x)}
    if t is float:
        return x if math.isfinite(x) else {"$float": repr(x)}
    if t is complex:
        return {"$complex": [x.real.hex(), x.imag.hex()]}
    if t is list:
        return [_enc(v, blobs, size, depth + 1) for v in x]
    if t is tuple or (isinstance(x, tuple) and hasattr(x, "_fields")):  # a namedtuple is a tuple too
        return {"$tuple": [_enc(v, blobs, size, depth + 1) for v in tuple(x)]}
    if t is dict or (isinstance(x, dict) and t.__module__ == "collections"):  # OrderedDict, defaultdict, ...
        items = []
        for k, v in dict.items(x):
            if type(k) not in (str, int):
                raise Unsendable(f"ключ словаря типа {type(k).__name__}: ключи — только str или int")
            items.append([k, _enc(v, blobs, size, depth + 1)])
        return {"$dict": items}
    if t is np.ndarray:
        if x.dtype.kind not in PLAIN_KINDS or x.dtype.fields is not None:
            raise Unsendable(f"массив с dtype={x.dtype}: верните массив чисел (float, int или bool)")
        data = np.ascontiguousarray(x).tobytes()
        blobs.append(data)
        size[0] += len(data)
        return {"$nd": [_dtype_name(x.dtype), list(x.shape), size[0] - len(data), len(data)]}
    if isinstance(x, np.generic) and t.__module__ == "numpy":
        if x.dtype.kind not in PLAIN_KINDS:
            raise Unsendable(f"скаляр NumPy типа {t.__name__}")
        return {"$np": [_dtype_name(x.dtype), x.tobytes().hex()]}
    if t is np.random.Generator:
        return {"$gen": _enc(x.bit_generator.state, blobs, size, depth + 1)}
    if t is Journal:
        return {"$journal": x.text()}
    raise Unsendable(_describe_type(x))


def _describe_type(x: Any) -> str:
    t = type(x)
    if isinstance(x, np.ndarray):
        return f"подкласс np.ndarray ({t.__module__}.{t.__name__}): верните обычный np.ndarray (np.asarray(x))"
    if isinstance(x, (list, tuple, dict, int, float, str)):
        base = next(b for b in (list, tuple, dict, int, float, str) if isinstance(x, b))
        return f"объект типа {t.__name__} (подкласс {base.__name__}): верните обычный {base.__name__}"
    return f"объект типа {t.__module__}.{t.__name__}"


class Journal:
    """The method calls made on one of the kit's objects during a call: ``(path, method, args, kwargs)`` each.

    Sent as one JSON text (an environment may see 100 000 steps in one call), with NumPy scalars among the
    arguments tagged as in any other value; :meth:`entries` decodes and checks every entry."""

    _SCALARS = (int, float, bool, str, type(None))

    def __init__(self, calls: list | None):
        self.calls = calls
        self._text = ""

    def text(self) -> str:
        if self.calls is None:
            return self._text
        return json.dumps(self.calls, default=self._tag, ensure_ascii=False, separators=(",", ":"))

    @staticmethod
    def _tag(x):
        if isinstance(x, np.generic) and type(x).__module__ == "numpy" and x.dtype.kind in PLAIN_KINDS:
            return {"$np": [_dtype_name(x.dtype), x.tobytes().hex()]}
        raise Unsendable(f"аргумент метода среды: {_describe_type(x)}")

    @classmethod
    def parse(cls, text: str) -> "Journal":
        """A journal received as text; read only when it is replayed (often never: see grader/boundary/session.py)."""
        if len(text) > MAX_TEXT:
            raise WireError("слишком длинный журнал")
        journal = cls(None)
        journal._text = text
        return journal

    def entries(self):
        """``(path, method, args, kwargs)`` with plain values; :class:`WireError` for anything else."""
        if self.calls is None:
            try:
                self.calls = json.loads(self._text)
            except (ValueError, RecursionError):
                raise WireError("журнал не читается") from None
        if type(self.calls) is not list:
            raise WireError("журнал не читается")
        empty = memoryview(b"")
        for entry in self.calls:
            if type(entry) is not list or len(entry) != 4:
                raise WireError("журнал не читается")
            path, name, args, kwargs = entry
            if type(path) is not list or type(name) is not str or type(args) is not list or type(kwargs) is not dict:
                raise WireError("журнал не читается")
            args = [a if type(a) in self._SCALARS else _dec(a, empty, 1) for a in args]
            kwargs = {k: v if type(v) in self._SCALARS else _dec(v, empty, 1) for k, v in kwargs.items()}
            yield path, name, args, kwargs


# ---- decoding (runs in the process that grades) -----------------------------------------------------

def decode(frame: bytes) -> Any:
    if len(frame) < _HEADER.size:
        raise WireError("короткий кадр")
    n_text, n_blob = _HEADER.unpack_from(frame)
    if _HEADER.size + n_text + n_blob != len(frame) or len(frame) > MAX_FRAME + _HEADER.size or n_text > MAX_TEXT:
        raise WireError("длина кадра не сходится")
    try:
        tree = json.loads(frame[_HEADER.size:_HEADER.size + n_text].decode("utf-8"))
    except (ValueError, RecursionError) as exc:
        raise WireError(f"не JSON: {exc}") from None
    blob = memoryview(frame)[_HEADER.size + n_text:]
    return _dec(tree, blob, 0)


_PLAIN = (bool, int, float, str, type(None))  # what JSON gives that decodes to itself


def _dec(x: Any, blob: memoryview, depth: int) -> Any:
    if depth > MAX_DEPTH:
        raise WireError("слишком глубокая вложенность")
    t = type(x)
    if t in _PLAIN:
        return x
    if t is list:
        return _items(x, blob, depth + 1)
    if t is not dict or len(x) != 1:
        raise WireError(f"неожиданное значение {t.__name__}")
    (tag, body), = x.items()
    decoder = _TAGS.get(tag)
    if decoder is None:
        raise WireError(f"неизвестный тег {tag!r}")
    return decoder(body, blob, depth)


def _items(values: list, blob: memoryview, depth: int) -> list:
    """``[_dec(v, blob, depth) for v in values]``, a plain value taken as it is without a call (most of an answer's
    values are numbers) where the depth allows it."""
    if depth > MAX_DEPTH:
        return [_dec(v, blob, depth) for v in values]
    return [v if type(v) in _PLAIN else _dec(v, blob, depth) for v in values]


def _tuple(body, blob, depth):
    if type(body) is not list:
        raise WireError("плохой кортеж")
    return tuple(_items(body, blob, depth + 1))


def _dict(body, blob, depth):
    if type(body) is not list:
        raise WireError("плохой словарь")
    out = {}
    for item in body:
        if type(item) is not list or len(item) != 2 or type(item[0]) not in (str, int):
            raise WireError("плохой элемент словаря")
        out[item[0]] = _dec(item[1], blob, depth + 1)
    return out


def _scalar(body, blob, depth):
    if type(body) is not list or len(body) != 2 or type(body[1]) is not str:
        raise WireError("плохой скаляр")
    dtype = _plain_dtype(body[0])
    try:
        raw = bytes.fromhex(body[1])
    except ValueError:
        raise WireError("плохой скаляр") from None
    if len(raw) != dtype.itemsize:
        raise WireError("плохой скаляр")
    return np.frombuffer(raw, dtype=dtype)[0]


def _big_int(body, blob, depth):
    if type(body) is not str or len(body) > 5000:
        raise WireError("плохое целое")
    try:
        return int(body)
    except ValueError:
        raise WireError("плохое целое") from None


def _special_float(body, blob, depth):
    if body not in ("nan", "inf", "-inf"):
        raise WireError("плохое число")
    return float(body)


def _complex(body, blob, depth):
    if type(body) is not list or len(body) != 2:
        raise WireError("плохое комплексное число")
    try:
        return complex(float.fromhex(body[0]), float.fromhex(body[1]))
    except (TypeError, ValueError):
        raise WireError("плохое комплексное число") from None


def _journal(body, blob, depth):
    if type(body) is not str:
        raise WireError("плохой журнал")
    return Journal.parse(body)


_TAGS = {"$tuple": _tuple, "$dict": _dict, "$nd": lambda body, blob, depth: _array(body, blob), "$np": _scalar,
         "$int": _big_int, "$float": _special_float, "$complex": _complex, "$journal": _journal,
         "$gen": lambda body, blob, depth: generator_from_state(_dec(body, blob, depth + 1))}


def _plain_dtype(name: Any) -> np.dtype:
    if type(name) is not str or len(name) > 8:
        raise WireError("плохой dtype")
    try:
        dtype = np.dtype(name)
    except TypeError:
        raise WireError(f"плохой dtype {name!r}") from None
    if dtype.kind not in PLAIN_KINDS or dtype.fields is not None or dtype.subdtype is not None:
        raise WireError(f"dtype {name!r} не из простых")
    return dtype


def _array(body: Any, blob: memoryview) -> np.ndarray:
    if type(body) is not list or len(body) != 4:
        raise WireError("плохой массив")
    name, shape, offset, nbytes = body
    dtype = _plain_dtype(name)
    if type(shape) is not list or len(shape) > 32 or any(type(n) is not int or n < 0 for n in shape):
        raise WireError("плохая форма массива")
    if type(offset) is not int or type(nbytes) is not int or offset < 0 or offset + nbytes > len(blob):
        raise WireError("массив за пределами кадра")
    if math.prod(shape) * dtype.itemsize != nbytes:
        raise WireError("размер массива не сходится с формой")
    return np.frombuffer(blob[offset:offset + nbytes], dtype=dtype).reshape(shape).copy()


BIT_GENERATORS = ("PCG64", "PCG64DXSM", "MT19937", "Philox", "SFC64")


def generator_from_state(state: Any) -> np.random.Generator:
    """A fresh ``np.random.Generator`` in ``state`` (a bit generator's ``.state`` dict), validated by NumPy."""
    name = state.get("bit_generator") if type(state) is dict else None
    if name not in BIT_GENERATORS:
        raise WireError("неизвестный генератор случайных чисел")
    bitgen = getattr(np.random, name)()
    try:
        bitgen.state = state
    except (TypeError, ValueError, KeyError, OverflowError) as exc:
        raise WireError(f"плохое состояние генератора: {exc}") from None
    return np.random.Generator(bitgen)


# ---- frames on a byte stream ------------------------------------------------------------------------

FRAME_HEAD = _LENGTH = struct.Struct("<Q")  # the length of the frame that follows


def write_frame(stream, payload: bytes) -> None:
    stream.write(_LENGTH.pack(len(payload)) + payload)
    stream.flush()


def read_frame(stream, limit: int = MAX_FRAME + 64) -> bytes | None:
    """One frame, or None at the end of the stream; :class:`WireError` for a frame over ``limit``."""
    head = _read_exactly(stream, _LENGTH.size)
    if head is None:
        return None
    (n,) = _LENGTH.unpack(head)
    if n > limit:
        raise WireError(f"кадр длиной {n} байт больше предела")
    body = _read_exactly(stream, n)
    if body is None:
        raise WireError("поток оборвался посреди кадра")
    return body


def _read_exactly(stream, n: int) -> bytes | None:
    chunks, got = [], 0
    while got < n:
        chunk = stream.read(n - got)
        if not chunk:
            if got == 0:
                return None
            raise WireError("поток оборвался посреди кадра")
        chunks.append(chunk)
        got += len(chunk)
    return b"".join(chunks)
