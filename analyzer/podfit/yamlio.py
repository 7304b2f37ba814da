"""Safe, bounded YAML/JSON parsing that remembers where every mapping and key stands.

Mappings come back as :class:`LineDict` (a plain ``dict`` subclass, so ``json.dumps`` and Rego
engines take it as is) carrying ``line`` (1-based line of the mapping) and ``lines`` (key → line of
that key). Only the safe YAML tags construct; ``!!python/object`` and friends are errors. Alias
expansion and nesting depth are bounded per document, so an alias bomb is refused in milliseconds.
Duplicate keys are recorded (the last one wins, as in Kubernetes' YAML decoder warnings).
"""

from __future__ import annotations

import dataclasses
import re
from collections import OrderedDict
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from types import ModuleType
from typing import Any

import yaml
from yaml.constructor import ConstructorError, SafeConstructor
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

_PyLoader = yaml.SafeLoader
# LibYAML's C parser and composer when available: same nodes, several times faster
_CLoader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_PyBaseLoader = yaml.BaseLoader
_CBaseLoader = getattr(yaml, "CBaseLoader", yaml.BaseLoader)

__all__ = ["chunks", "LineDict", "YamlLimits", "YamlLimitError", "YamlDocument", "iter_documents", "line_of"]

_MERGE_TAG = "tag:yaml.org,2002:merge"


class LineDict(dict):
    """A dict that knows its source line and the line of each key."""

    __slots__ = ("line", "lines")  # set by whoever makes one (no __init__: it is made per mapping)
    line: int
    lines: dict[Any, int]


def line_of(obj: Any, key: Any = None, default: int = 0) -> int:
    """Line of ``obj[key]`` (or of ``obj`` itself when key is None), if known."""
    if type(obj) is LineDict:
        if key is None:
            return obj.line or default
        return obj.lines.get(key, obj.line or default)
    return default


@dataclass(frozen=True)
class YamlLimits:
    max_nodes: int = 1_000_000  # nodes per document after alias expansion
    max_depth: int = 200  # nesting levels per document
    # Kubernetes refuses objects over about 1.5 MiB (etcd's request limit); a document many times
    # that size is not a manifest, and parsing it would only take time.
    max_document_bytes: int = 8 * 2**20


class YamlLimitError(Exception):
    def __init__(self, message: str, line: int) -> None:
        super().__init__(message)
        self.line = line

    def __reduce__(self) -> tuple[Any, ...]:  # crosses process boundaries with its line
        return (YamlLimitError, (str(self), self.line))


@dataclass(frozen=True)
class DuplicateKey:
    key: str
    line: int
    column: int


@dataclass(frozen=True)
class YamlDocument:
    index: int  # 0-based position in the stream
    line: int  # 1-based line where the document starts
    data: Any
    duplicates: tuple[DuplicateKey, ...] = ()
    lines: LineIndex | None = None
    chunk: int = -1  # which document chunk of the text it came from (see _chunks)
    first_line: int = 0  # the chunk's first line, 0-based


_SC = SafeConstructor()
_STR = "tag:yaml.org,2002:str"
_SCALARS = {
    "tag:yaml.org,2002:int": _SC.construct_yaml_int,
    "tag:yaml.org,2002:float": _SC.construct_yaml_float,
    "tag:yaml.org,2002:bool": _SC.construct_yaml_bool,
    "tag:yaml.org,2002:null": lambda node: None,
    # Kubernetes reads these as strings (JSON has no timestamps or binary): keep the text
    "tag:yaml.org,2002:timestamp": lambda node: node.value,
    "tag:yaml.org,2002:binary": lambda node: node.value,
    "tag:yaml.org,2002:value": lambda node: node.value,
}
_MAP_TAGS = frozenset({"tag:yaml.org,2002:map", "tag:yaml.org,2002:omap", "tag:yaml.org,2002:set"})
_SEQ_TAGS = frozenset({"tag:yaml.org,2002:seq", "tag:yaml.org,2002:pairs"})
# A chunk with fewer structural characters than this cannot nest deeply enough to exhaust the
# C stack of LibYAML's (recursive) composer; larger chunks are composed by the pure-Python one,
# whose recursion is bounded by the interpreter.
_C_SAFE_STRUCTURE = 4000
_DOC_START = re.compile(r"^---(?=[ \t\r\n]|$)", re.M)


class _Converter:
    """Node graph → Python data with lines, in one pass: duplicate keys, merge keys, aliases
    (shared, with their expanded size counted against the limit), depth, and only safe tags."""

    def __init__(self, limits: YamlLimits, line_offset: int) -> None:
        self.limits = limits
        self.offset = line_offset + 1
        self.count = 0
        self.memo: dict[int, tuple[Any, int]] = {}
        self.duplicates: list[DuplicateKey] = []

    def _err(self, message: str, node: Node) -> YamlLimitError:
        return YamlLimitError(message, node.start_mark.line + self.offset)

    def convert(self, node: Node, depth: int = 0) -> Any:
        cls = node.__class__
        if cls is ScalarNode:
            self.count += 1
            tag = node.tag
            if tag == _STR:
                return node.value
            make = _SCALARS.get(tag)
            if make is None:
                raise ConstructorError(None, None, f"unsupported tag {tag!r}", node.start_mark)
            try:
                return make(node)
            except ValueError:  # an integer past Python's int-from-text limit (sys.get_int_max_str_digits)
                raise self._err(f"a number of {len(node.value):,} characters: too long for any field", node) from None
        nid = id(node)
        seen = self.memo.get(nid)
        if seen is not None:
            obj, size = seen
            if size < 0:
                raise self._err("recursive alias", node)
            self.count += size
            if self.count > self.limits.max_nodes:
                raise self._err(f"document expands to more than {self.limits.max_nodes:,} nodes (alias bomb?)", node)
            return obj
        if depth >= self.limits.max_depth:
            raise self._err(f"document nests deeper than {self.limits.max_depth} levels", node)
        start = self.count
        if cls is MappingNode:
            if node.tag not in _MAP_TAGS:
                raise ConstructorError(None, None, f"unsupported tag {node.tag!r}", node.start_mark)
            obj = LineDict()
            obj.line = node.start_mark.line + self.offset
            obj.lines = lines = {}
            self.memo[nid] = (obj, -1)
            merges = []
            for key_node, value_node in node.value:
                if key_node.tag == _MERGE_TAG:
                    merges.append(value_node)
                    continue
                key = self.convert(key_node, depth + 1)
                try:
                    dup = key in obj
                except TypeError:
                    raise ConstructorError(None, None, "unhashable mapping key", key_node.start_mark) from None
                if dup:
                    self.duplicates.append(
                        DuplicateKey(str(key), key_node.start_mark.line + self.offset, key_node.start_mark.column + 1)
                    )
                obj[key] = self.convert(value_node, depth + 1)
                lines[key] = key_node.start_mark.line + self.offset
            for m in merges:
                if m.__class__ is not MappingNode and m.__class__ is not SequenceNode:
                    # kubectl (go-yaml) rejects the document: a merge takes a mapping or a list of them
                    raise ConstructorError(
                        None, None, "merge key (<<) needs a mapping or a list of mappings, not a scalar", m.start_mark
                    )
                sources = [m] if m.__class__ is MappingNode else m.value
                for src in sources:
                    merged = self.convert(src, depth + 1)
                    if not isinstance(merged, dict):
                        raise ConstructorError(None, None, "merge key (<<) needs a mapping", src.start_mark)
                    for k, v in merged.items():
                        if k not in obj:
                            obj[k] = v
                            lines[k] = getattr(merged, "lines", {}).get(k, obj.line)
        elif cls is SequenceNode:
            if node.tag not in _SEQ_TAGS:
                raise ConstructorError(None, None, f"unsupported tag {node.tag!r}", node.start_mark)
            obj = []
            self.memo[nid] = (obj, -1)
            for item in node.value:
                obj.append(self.convert(item, depth + 1))
        else:  # pragma: no cover
            raise ConstructorError(None, None, f"unexpected node {cls.__name__}", node.start_mark)
        self.count += 1
        if self.count > self.limits.max_nodes:
            raise self._err(f"document expands to more than {self.limits.max_nodes:,} nodes (alias bomb?)", node)
        self.memo[nid] = (obj, self.count - start)
        return obj


# a chunk of nothing but directives, comments and blank lines, with at least one directive: it
# belongs to the document after it (a directive ends at the next "---")
_DIRECTIVES_ONLY = re.compile(r"\A(?:[ \t]*(?:#[^\n]*)?\n)*(?:%[^\n]*\n(?:[ \t]*(?:#[^\n]*)?\n)*)+\Z")


_TRAILING_DIRECTIVES = re.compile(
    r"^\.\.\.[ \t]*(?:#[^\n]*)?\n((?:[ \t]*(?:#[^\n]*)?\n)*(?:%[^\n]*\n(?:[ \t]*(?:#[^\n]*)?\n)*)+)\Z", re.M
)


def _chunks(text: str) -> Iterator[tuple[int, str]]:
    """Split a stream at document-start markers (column 0), with each chunk's 0-based first line.

    A ``---`` at column 0 always starts a document (it cannot continue a block scalar, and is an
    error inside a flow scalar), so the split is exact; it lets each document be composed (and
    fail) on its own. Directives (``%YAML 1.1``, ``%TAG``) before a ``---`` go with the document
    they precede, as the YAML grammar has it.
    """
    pos = 0
    line = 0
    held: tuple[int, str] | None = None  # directives (%YAML, %TAG) waiting for the document they precede
    for m in _DOC_START.finditer(text):
        if m.start() > pos:
            chunk = text[pos : m.start()]
            if _DIRECTIVES_ONLY.match(chunk):
                held = (line, chunk) if held is None else (held[0], held[1] + chunk)
            else:
                if held is not None:
                    chunk, start, held = held[1] + chunk, held[0], None
                else:
                    start = line
                # directives after a document's end marker (...) belong to the next document
                tail = _TRAILING_DIRECTIVES.search(chunk)
                if tail is not None:
                    yield start, chunk[: tail.start(1)]
                    held = (start + chunk[: tail.start(1)].count("\n"), tail.group(1))
                else:
                    yield start, chunk
            line += text[pos : m.start()].count("\n")
        pos = m.start()
    if pos < len(text):
        if held is not None:
            yield held[0], held[1] + text[pos:]
        else:
            yield line, text[pos:]
    elif held is not None:
        yield held


def chunks(text: str) -> list[tuple[int, str]]:
    """The document chunks of a text, as iter_documents splits it (for the parallel loader)."""
    return list(_chunks(text))


_LEADING = re.compile(r"^[ \t?:-]*", re.M)


def _c_composer_safe(chunk: str) -> bool:
    """Whether LibYAML's recursive composer can take this chunk without overflowing the C stack.

    Nesting depth is at most the flow openers plus the longest run of block indentation and
    indicators at a line start (every block level needs at least one such character). Small
    chunks skip the estimate: they cannot hold enough structure to nest that deep.
    """
    if sum(chunk.count(c) for c in "[{:-?") < _C_SAFE_STRUCTURE:
        return True
    flow = chunk.count("[") + chunk.count("{")
    if flow >= _C_SAFE_STRUCTURE:
        return False
    block = max((len(m) for m in _LEADING.findall(chunk)), default=0)
    return flow + block < _C_SAFE_STRUCTURE


class LineIndex:
    """Lines of one document's fields, by path (keys and list indexes).

    Built from the line-tracking tree when the document went through the safe slow path. Otherwise
    it holds the document's text and, when asked, composes the document's node graph with LibYAML
    and walks only the requested path, converting just the keys met on the way (without anchors,
    aliases or merge keys the graph is a tree, and the lines are those the slow path records).
    Node graphs are large, so only the most recently used are kept (findings come document by
    document); a text with anchors or merge keys is converted once into the slow path's tree.
    """

    __slots__ = ("_text", "_first_line", "_limits", "_tree", "_plain")

    def __init__(
        self,
        tree: Any = None,
        text: str = "",
        first_line: int = 0,
        limits: YamlLimits | None = None,
        plain: bool = False,
    ):
        self._tree = tree
        self._text = text
        self._first_line = first_line
        self._limits = limits or YamlLimits()
        # plain: the fast parser read the text, so it has no anchors, aliases, merge keys or tags
        self._plain = plain

    @property
    def plain(self) -> bool:
        return self._plain

    def _root(self) -> Any:
        if self._tree is None and not self._plain:
            try:
                docs = list(_slow_documents(self._text, self._first_line, self._limits, 0))
                self._tree = docs[0].data if docs else {}
            except Exception:  # the fast parser accepted it; lines are a courtesy
                self._tree = {}
            self._text = ""
        if self._tree is not None:
            return self._tree
        graph = _recent(_RECENT, self, self._compose)
        if graph is None:
            self._tree, self._text = {}, ""
            return self._tree
        return graph

    def _compose(self) -> tuple[Node, dict[int, Any]] | None:
        """The document's node graph (and room for its key maps), or None when it is no mapping."""
        # no implicit tags (the walk converts only the keys it meets, and resolves those)
        loader = (_CBaseLoader if _c_composer_safe(self._text) else _PyBaseLoader)(self._text)
        try:
            node = loader.get_single_node()
        except Exception:
            node = None
        finally:
            loader.dispose()
        return (node, {}) if isinstance(node, MappingNode) else None

    def line(self, path: tuple[Any, ...], default: int) -> int:
        if self._plain and self._tree is None:
            outline = self._outline()
            if outline is not None:
                found = outline.line(path)
                if found is not None:
                    return found + self._first_line + 1
        cur = self._root()
        if type(cur) is tuple:
            return self._node_line(cur[0], cur[1], path)
        line = line_of(cur, default=default)
        for key in path:
            if isinstance(cur, dict):
                if key not in cur:  # a missing key: the mapping that lacks it
                    return line_of(cur, default=line)
                line = line_of(cur, key, line)
                cur = cur[key]
            elif isinstance(cur, list) and isinstance(key, int) and 0 <= key < len(cur):
                cur = cur[key]
                line = line_of(cur, default=line)
            else:
                break
        return line

    def _outline(self) -> _Outline | None:
        """The text's outline (see :class:`_Outline`), None when it cannot be used."""
        return _recent(_OUTLINES, self, lambda: _Outline(self._text) if _Outline.valid(self._text) else False) or None

    def _node_line(self, cur: Node, maps: dict[int, Any], path: tuple[Any, ...]) -> int:
        """``line`` over the node graph: the same walk as over the converted tree."""
        offset = self._first_line + 1
        line = cur.start_mark.line + offset
        for key in path:
            if cur.__class__ is MappingNode:
                entry = self._keys(cur, maps).get(key) if _hashable(key) else None
                if entry is None:
                    return cur.start_mark.line + offset
                # (line_of reads a None key as "the mapping itself": the same here)
                line, cur = (entry[0] if key is not None else cur.start_mark.line) + offset, entry[1]
            elif cur.__class__ is SequenceNode and isinstance(key, int) and 0 <= key < len(cur.value):
                cur = cur.value[key]
                if cur.__class__ is MappingNode:
                    line = cur.start_mark.line + offset
            else:
                break
        return line

    def _keys(self, node: MappingNode, maps: dict[int, Any]) -> dict[Any, tuple[int, Node]]:
        """{key: (0-based line of the key, value node)}; a repeated key keeps its last entry, as
        the converter does."""
        keys = maps.get(id(node))
        if keys is None:
            conv = _Converter(self._limits, self._first_line)
            keys = {}
            for key_node, value_node in node.value:
                if key_node.__class__ is ScalarNode:
                    if not key_node.style:  # a plain key: its YAML 1.1 type, as SafeLoader reads it
                        key_node.tag = _RESOLVER.resolve(ScalarNode, key_node.value, (True, False))
                    key = conv.convert(key_node)
                    if _hashable(key):
                        keys[key] = (key_node.start_mark.line, value_node)
            maps[id(node)] = keys
        return keys


# Node graphs of the documents whose lines were asked for last: {LineIndex: (root, key maps)}.
_RECENT: OrderedDict[LineIndex, tuple[Node, dict[int, Any]] | None] = OrderedDict()
_RECENT_MAX = 32
# Outlines of the plain documents whose lines were asked for last (False: the text does not allow one).
_OUTLINES: OrderedDict[LineIndex, _Outline | bool] = OrderedDict()


def _recent(cache: OrderedDict[Any, Any], key: Any, make: Callable[[], Any]) -> Any:
    """``cache[key]``, made when missing; the cache keeps the ``_RECENT_MAX`` last used."""
    if key in cache:
        cache.move_to_end(key)
        return cache[key]
    value = cache[key] = make()
    if len(cache) > _RECENT_MAX:
        cache.popitem(last=False)
    return value


def _hashable(key: Any) -> bool:
    try:
        hash(key)
    except TypeError:
        return False
    return True


# ------------------------------------------------------------------- lines without a parser ---

# A mapping key at the start of a line's content: quoted (single line) or plain, then ":" and a
# space or the line's end. Plain keys start with no indicator; "#" only inside, after a non-space.
_OUTLINE_KEY = re.compile(
    r"""('(?:[^'\n]|'')*'|"[^"\\\n]*"|[^\s'"#\[\]{},&*!|>%@`?:-](?:[^:#\n]|:(?! |$)|(?<! )#)*?) *:(?: +|$)"""
)
_OUTLINE_SQ = re.compile(r"'(?:[^'\n]|'')*' *(?:#.*)?$")
_OUTLINE_DQ = re.compile(r'"(?:[^"\\\n]|\\.)*" *(?:#.*)?$')
_OUTLINE_FLOW_TOKENS = re.compile(r"""'(?:[^'\n]|'')*'|"(?:[^"\\\n]|\\.)*"|[\[\]{}]|['"#]""")
_OUTLINE_EXPLICIT = re.compile(r"^[ -]*[?:](?: |$)", re.M)
_OUTLINE_QUOTING = re.compile(r"['\"\[{]")
_KEY_TAGS: dict[str, bool] = {}  # plain key text -> whether YAML 1.1 reads it as a string


class _Outline:
    """The block structure of a document read from its text line by line: which line holds each
    key, sequence item and mapping, by indentation alone. Only for documents the fast path read
    (no anchors, aliases, tags or merge keys, no tabs); anything it cannot place with certainty
    makes :meth:`line` answer None and the caller composes the document with LibYAML instead:
    multi-line quoted scalars and flow collections (their continuation lines may sit at any
    indentation), values starting with an indicator, non-string keys, nested "- -" items. Block
    scalars and multi-line plain scalars are safe: their lines are always indented deeper than
    the block that holds them, and the outline never looks inside a value written on its key's
    line.

    Nodes are tuples: ("map", column, line), ("seq", column, line), ("scalar", line),
    ("flow", line) for a flow collection, ("mapflow", line) for a flow mapping, ("null", line).
    """

    __slots__ = ("_lines", "_leads", "_keys", "_items", "_values", "_root")

    def __init__(self, text: str) -> None:
        self._lines = lines = text.split("\n")
        # indentation of each line's content, or -1 for blank and comment-only lines
        leads = []
        for s in lines:
            body = s.lstrip(" ")
            leads.append(-1 if not body or body[0] == "#" else len(s) - len(body))
        self._leads = leads
        self._keys: dict[int, Any] = {}
        self._items: dict[int, Any] = {}
        self._values: dict[int, Any] = {}
        self._root: Any = False

    @staticmethod
    def valid(text: str) -> bool:
        """No line holds a quoted scalar or flow collection left open at its end (their next lines
        could then stand at any indentation), an explicit key ("? ") or a bare value (": "), and
        no line ends in a carriage return."""
        if "\r" in text or _OUTLINE_EXPLICIT.search(text):
            return False
        end = -1
        for m in _OUTLINE_QUOTING.finditer(text):
            at = m.start()
            if at < end:
                continue  # that line was checked
            start = text.rfind("\n", 0, at) + 1
            end = text.find("\n", at)
            if end < 0:
                end = len(text)
            if not _closed(text[start:end]):
                return False
        return True

    def _next(self, i: int) -> int:
        """The next line at or after i with content, or -1."""
        leads = self._leads
        while i < len(leads):
            if leads[i] >= 0:
                return i
            i += 1
        return -1

    def root(self) -> Any:
        if self._root is False:
            self._root = self._find_root()
        return self._root

    def _find_root(self) -> Any:
        i = self._next(0)
        if i >= 0 and _DOC_START.match(self._lines[i]):
            rest = self._lines[i][3:].strip(" ")
            if rest and rest[0] != "#":
                return None  # content on the document marker's line
            i = self._next(i + 1)
        if i < 0:
            return None
        return self._block(i, self._leads[i])

    def _block(self, i: int, col: int) -> Any:
        """The node whose content starts at column ``col`` of line i."""
        s = self._lines[i]
        if _dash(s, col):
            return ("seq", col, i)
        if _OUTLINE_KEY.match(s, col):
            return ("map", col, i)
        return None

    def _value(self, i: int, rest: str, col: int, compact_ok: bool) -> Any:
        """The value of a key (at column ``col`` of line i) whose text after the colon is ``rest``."""
        rest = rest.strip(" ")
        if rest and rest[0] != "#":
            c = rest[0]
            if c == "{":
                return ("mapflow", i)
            if c == "[":
                return ("flow", i)
            if c in "&*!?%@`" or _dash(rest, 0):
                return None
            return ("scalar", i)
        j = self._next(i + 1)
        if j < 0:
            return ("null", i)
        lead = self._leads[j]
        if lead > col:
            return self._block(j, lead)
        if lead == col and compact_ok and _dash(self._lines[j], col):
            return ("seq", col, j)
        return ("null", i)

    def keys(self, node: Any) -> dict[Any, int] | None:
        """{key: line of the key} of a block mapping (the last of repeated keys)."""
        got = self._keys.get(node[2], False)
        if got is not False:
            return got
        _, col, i = node
        lines, leads = self._lines, self._leads
        out: dict[Any, int] = {}
        n = len(lines)
        first = True
        while i < n:
            lead = leads[i]
            if not first:
                if lead != col:
                    if lead >= 0 and lead < col:
                        break
                    i += 1
                    continue
                if _dash(lines[i], col):
                    i += 1  # a compact sequence: the previous key's value
                    continue
            first = False
            m = _OUTLINE_KEY.match(lines[i], col)
            key = _outline_key(m.group(1)) if m else None
            if key is None:
                self._keys[node[2]] = None
                return None
            out[key] = i
            i += 1
        self._keys[node[2]] = out
        return out

    def value(self, i: int, col: int) -> Any:
        """The value node of the key at column ``col`` of line i."""
        got = self._values.get(i, False)
        if got is False:
            m = _OUTLINE_KEY.match(self._lines[i], col)
            got = self._values[i] = self._value(i, self._lines[i][m.end() :], col, True) if m else None
        return got

    def items(self, node: Any) -> list[Any] | None:
        """The item nodes of a block sequence."""
        got = self._items.get(node[2], False)
        if got is not False:
            return got
        _, col, i = node
        lines, leads = self._lines, self._leads
        out: list[Any] = []
        while i < len(lines):
            lead = leads[i]
            if lead < 0 or lead > col:
                i += 1
                continue
            if lead < col or not _dash(lines[i], col):
                break
            body = lines[i][col + 1 :].lstrip(" ")
            at = len(lines[i]) - len(body)
            if not body or body[0] == "#":  # the item starts on the next line
                item = self._value(i, "", col, False)
            elif _dash(body, 0):
                item = None  # "- - x"
            elif _OUTLINE_KEY.match(lines[i], at):
                item = ("map", at, i)
            else:
                item = self._value(i, body, col, False)
            if item is None:
                self._items[node[2]] = None
                return None
            out.append(item)
            i += 1
        self._items[node[2]] = out
        return out

    def line(self, path: tuple[Any, ...]) -> int | None:
        """The 0-based line :meth:`LineIndex._node_line` gives for ``path`` (before its offset), or
        None when the outline cannot tell."""
        node = self.root()
        if node is None or node[0] != "map":
            return None
        line = node[2]
        for key in path:
            kind = node[0]
            if kind == "map":
                keys = self.keys(node)
                if keys is None:
                    return None
                at = keys.get(key) if _hashable(key) else None
                if at is None:
                    return node[2]
                line, node = at, self.value(at, node[1])
                if node is None:
                    return None
            elif kind == "seq":
                if not (isinstance(key, int) and key >= 0):
                    break
                items = self.items(node)
                if items is None:
                    return None
                if key >= len(items):
                    break
                node = items[key]
                if node[0] == "map":
                    line = node[2]
                elif node[0] == "mapflow":
                    line = node[1]
            elif kind in ("flow", "mapflow"):
                return None  # inside a flow collection: LibYAML knows
            else:
                break
        return line


def _dash(s: str, at: int) -> bool:
    """A block sequence's "-" at ``at``: followed by a space or the line's end."""
    return s[at : at + 1] == "-" and s[at + 1 : at + 2] in ("", " ")


def _closed(s: str) -> bool:
    """Every quoted scalar and flow collection that starts on this line ends on it (quotes inside a
    plain scalar, like ``it's``, are plain characters and fine)."""
    body = s.lstrip(" ")
    while body.startswith("- "):
        body = body[2:].lstrip(" ")
    m = _OUTLINE_KEY.match(body)
    if m is not None:
        value = body[m.end() :].lstrip(" ")
    elif body[:1] in ("'", '"', "[", "{"):
        value = body
    elif ": " in body or body.endswith(":"):
        return False  # a key the pattern did not take: where its value starts is unknown
    else:
        return True  # a plain scalar: quotes and brackets inside it are its text
    c = value[:1]
    if c == "'":
        return _OUTLINE_SQ.match(value) is not None
    if c == '"':
        return _OUTLINE_DQ.match(value) is not None
    if c in ("[", "{"):
        depth = 0
        for t in _OUTLINE_FLOW_TOKENS.finditer(value):
            tok = t.group()
            if tok in ("[", "{"):
                depth += 1
            elif tok in ("]", "}"):
                depth -= 1
                if depth == 0:
                    return re.fullmatch(r" *(?:#.*)?", value[t.end() :]) is not None
            elif tok in ("'", '"'):
                return False  # a quote left open
            elif tok == "#" and value[t.start() - 1] == " ":
                return False  # a comment inside an open collection
        return False
    return True


def _outline_key(text: str) -> Any:
    """A key as written → the key as SafeLoader reads it, or None when it is not a plain string
    (numbers, booleans, null keys and escapes are left to LibYAML)."""
    if text[0] == "'":
        return text[1:-1].replace("''", "'")
    if text[0] == '"':
        return text[1:-1]
    ok = _KEY_TAGS.get(text)
    if ok is None:
        ok = _RESOLVER.resolve(ScalarNode, text, (True, False)) == _STR_TAG
        if len(_KEY_TAGS) < 10_000:
            _KEY_TAGS[text] = ok
    return text if ok else None


# The Rust YAML parser (yaml_rs), much faster than LibYAML through PyYAML and used only where the
# two agree. Importing it costs about 6 ms and saves about 0.2 ms per small document, so it is
# imported once a process has parsed _FAST_AFTER bytes (a one-file hook run never pays for it);
# the documents read either way are the same.
_yaml_rs: ModuleType | None = None
_FAST_AFTER = 64 * 1024
_fast_state = {"bytes": 0, "imported": False}


def _rust() -> ModuleType | None:
    """yaml_rs, imported on first use (None when it is not installed)."""
    global _yaml_rs
    if not _fast_state["imported"]:
        _fast_state["imported"] = True
        try:
            import yaml_rs
        except ImportError:  # pragma: no cover - optional speed-up
            return None
        _yaml_rs = yaml_rs
    return _yaml_rs


def _fast_pays(size: int) -> bool:
    """Whether the Rust parser is worth its import by now: once this process has been handed
    :data:`_FAST_AFTER` bytes of YAML to read fast."""
    if _fast_state["imported"]:
        return True
    _fast_state["bytes"] += size
    return _fast_state["bytes"] >= _FAST_AFTER


# Plain scalars that YAML 1.1 (PyYAML, like Kubernetes' go-yaml) and YAML 1.2 (the Rust parser)
# may read differently are found by shape: every token that starts like a number, or is a YAML 1.1
# boolean word, must be one of the forms both read alike (plain decimal integers and floats, and
# Kubernetes quantities, which both read as strings); anything else sends the document to PyYAML.
_TOKEN = re.compile(
    r"(?:^|[\s\[{,])((?:[-+._0-9~=]|[yYnNoO](?=[a-zA-Z]{0,2}[ \t]*(?:$|[,\]}#]|:(?:\s|$))))"
    r"(?:[^\s,\[\]{}#:]|:(?![\s]|$))*)[ \t]*(?=$|[,\]}#]|:(?:\s|$))",
    re.M,
)
_AGREED = re.compile(
    r"-?(?:0|[1-9][0-9]*)|\+[1-9][0-9]*|[-+]?[0-9]+\.[0-9]*|\.[0-9]+"
    r"|[0-9]+(?:\.[0-9]+)?(?:[numkMGTPE]|[KMGTPE]i)|~|=|---|[a-zA-Z]+"
)
_BOOL11 = frozenset("yes Yes YES no No NO on On ON off Off OFF y Y n N".split())


def _divergent(chunk: str) -> bool:
    """Some plain token of the text the two YAML versions may read differently. Token matches
    never cross a line end, so the answer is looked up line by line: most lines of a repository's
    manifests (``    cpu: 250m``, ``kind: Deployment``) repeat, and each is searched once."""
    seen = _DIVERGENT_LINES
    for line in chunk.split("\n"):
        found = seen.get(line)
        if found is None:
            found = False
            found = any(_diverges(m.group(1)) for m in _TOKEN.finditer(line))
            if len(seen) >= _DIVERGENT_LINES_MAX:
                seen.clear()
            seen[line] = found
        if found:
            return True
    return False


_DIVERGENT_LINES: dict[str, bool] = {}
_DIVERGENT_LINES_MAX = 200_000


def _diverges(token: str) -> bool:
    """A plain token that YAML 1.1 and 1.2 may read differently."""
    return token in _BOOL11 or not _AGREED.fullmatch(token)


# A quoted scalar that is the whole value on its line, after "key: " or "- " (one line, closed,
# nothing but a comment after it). Inside it, anchors, aliases, tags, directives and merge keys are
# plain characters in both parsers, so the indicator checks look at the text with it blanked out
# (a CronJob's schedule: '*/5 * * * *' would otherwise pass for an alias).
# What may precede a scalar that is the whole value on its line: indentation, sequence dashes, a key.
_VALUE_START = r"""[ \t]*(?:-[ \t]+)*(?:[^\s#'"\[\]{},&*!|>%@`?:-][^\n#'"]*?:[ \t]+)?"""
_QUOTED_VALUE = re.compile(
    rf"""^({_VALUE_START})(?:'(?:[^'\n]|'')*'|"[^"\\\n]*")(?=[ \t]*(?:#[^\n]*)?$)""",
    re.M,
)
# What may precede a plain scalar that is the whole value on its line, and what may follow it.
_VALUE_PREFIX = re.compile(_VALUE_START + r"\Z")
_VALUE_SUFFIX = re.compile(r"[ \t]*(?:#[^\n]*)?(?:\n|\Z)")
_STR_TAG = "tag:yaml.org,2002:str"
_RESOLVER = yaml.resolver.Resolver()  # PyYAML's (YAML 1.1) implicit tags, as SafeLoader uses them


def _quote_strings(chunk: str) -> str | None:
    """The text with every token the two YAML versions read differently put in single quotes, when
    each such token is a whole value on its line that YAML 1.1 (PyYAML) reads as a string (``1e9``,
    ``5e-1``: YAML 1.2 reads them as numbers); None when some token is anything else."""
    out, pos = [], 0
    for m in _TOKEN.finditer(chunk):
        token = m.group(1)
        if not _diverges(token):
            continue
        start, end = m.span(1)
        line_start = chunk.rfind("\n", 0, start) + 1
        if (
            "'" in token
            or _RESOLVER.resolve(ScalarNode, token, (True, False)) != _STR_TAG
            or not _VALUE_PREFIX.match(chunk, line_start, start)
            or not _VALUE_SUFFIX.match(chunk, end)
        ):
            return None
        out += [chunk[pos:start], "'", token, "'"]
        pos = end
    return "".join(out) + chunk[pos:] if out else chunk


def _only_quoted_differ(plain: Any, quoted: Any, budget: list[int]) -> bool:
    """The two readings are the same except where the quoted text has a string and the plain text
    a number (at most ``budget[0]`` such places, counted down)."""
    if type(plain) is dict and type(quoted) is dict:
        if len(plain) != len(quoted):
            return False
        for (k1, v1), (k2, v2) in zip(plain.items(), quoted.items(), strict=True):
            if k1 != k2 or type(k1) is not type(k2) or not _only_quoted_differ(v1, v2, budget):
                return False
        return True
    if type(plain) is list and type(quoted) is list:
        return len(plain) == len(quoted) and all(
            _only_quoted_differ(a, b, budget) for a, b in zip(plain, quoted, strict=True)
        )
    if type(plain) is type(quoted) and plain == quoted:
        return True
    if type(quoted) is str and type(plain) in (int, float):
        budget[0] -= 1
        return budget[0] >= 0
    return False


# Indicator characters where PyYAML and the Rust parser disagree on what is valid.
_SUSPECT = re.compile(r"[\s\[{,](?:[:?]\S|[&*][^\s,\[\]{}])|[\[{,][ \t]*[>|]|[>|][ \t]*[^\s#0-9+-]")
_FAST_STOP = ("@", "`", ".inf", ".Inf", ".INF", ".nan", ".NaN", ".NAN", "<<", "!", "%")
_RAW_STOP = ("\t", "\\", "...")  # looked for in the whole text, quoted values included
# Characters PyYAML refuses (control characters) or reads as line breaks (NEL, LS, PS) or as a
# byte order mark, where YAML 1.2 and the Rust parser take them as text: a stream holding any is
# read by PyYAML, so that its error (as kubectl's) is the same whatever the file's size.
_LONE_CR = re.compile("\r(?!\n)")
_ASCII_UNREAD = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
# (compiled on first use, by re's own cache: its class of most of Unicode takes about 5 ms to
# compile, which a run over ASCII text never needs)
_UNREAD = "[^\t\n\r\x20-\x7e\xa0-\u2027\u202a-\ud7ff\ue000-\ufefe\uff00-\ufffd\U00010000-\U0010ffff]"
# A flow collection used as a key: the Rust parser makes it a tuple, PyYAML refuses it.
_FLOW_KEY = re.compile(r"[\]}][ \t]*:(?:[ \t]|$)", re.M)
# ... also as the implicit key of a flow mapping's entry (`{{ x }}`, an unrendered template): the
# Rust parser makes it a frozenset, PyYAML refuses it
_FLOW_IN_FLOW_MAP = re.compile(r"\{[ \t]*[\[{]")
_CONTENT_START = re.compile(r"\A(?:---[ \t\r]*(?:#[^\n]*)?\n)?(?:[ \t\r]*(?:#[^\n]*)?\n)*")


_COLON_FIRST = re.compile(r"[\s\[{,]:\S")
# Where the Rust parser reads what PyYAML refuses as a syntax error (as kubectl does): an empty
# implicit key (`: value` at a line's start or in a flow mapping), an explicit `?` key at a line's
# start, and a flow collection left open at the end of a line (a key broken over two lines in it).
_EMPTY_KEY = re.compile(r"\n[ \t-]*:(?:[ \t\r\n]|\Z)")  # from a line's end: far faster than ^ with re.M
_EMPTY_KEY_FIRST = re.compile(r"[ \t-]*:(?:[ \t\r\n]|\Z)")
_EMPTY_FLOW_KEY = re.compile(r"[\[{,][ \t]*:(?:[ \t\r\n]|\Z)")
_EXPLICIT_KEY = re.compile(r"^[ \t]*(?:-[ \t]+)*\?(?:[ \t]|$)", re.M)
_FLOW_LINE = re.compile(r"^[^\n\[{]*[\[{][^\n]*", re.M)  # a line that opens a flow collection
# ... and a colon before a flow indicator or `?` (`{memory:}`, `{cpu:? 1}`), a block scalar header
# as a flow value (`{count: |3}`)
_COLON_FLOW = re.compile(r":[,\[\]{}?]|:[ \t]+[>|][^\n]*[,}\]]")


def _indicators(text: str) -> bool:
    """Some character where the two parsers may disagree (anchors, aliases, tags, block scalar
    headers in odd places, flow keys...). Cheap tests first: most documents have none."""
    if any(s in text for s in _FAST_STOP):
        return True
    if ("]" in text or "}" in text) and _FLOW_KEY.search(text):
        return True
    if "{" in text and _FLOW_IN_FLOW_MAP.search(text):
        return True
    flow = "{" in text or "[" in text
    if flow and (_flow_left_open(text) or _EMPTY_FLOW_KEY.search(text)):
        return True
    if _EMPTY_KEY.search(text) or _EMPTY_KEY_FIRST.match(text) or _COLON_FLOW.search(text):
        return True
    if "?" in text and _EXPLICIT_KEY.search(text):
        return True
    if any(c in text for c in "&*?>|"):
        return _SUSPECT.search(text) is not None
    return _COLON_FIRST.search(text) is not None  # the only branch of _SUSPECT left


def _flow_left_open(text: str) -> bool:
    """Some line opens more flow collections than it closes."""
    for m in _FLOW_LINE.finditer(text):
        line = m.group()
        if line.count("{") + line.count("[") > line.count("}") + line.count("]"):
            return True
    return False


def _too_deep(chunk: str, max_depth: int) -> bool:
    """Whether an upper bound of the nesting depth reaches ``max_depth``: flow openers plus the
    longest run of block indentation and indicators at a line start (each block level takes at
    least one such character), plus one. (Searched for as a run of the length that would reach
    the limit: no document nests near it, so the search fails fast.)"""
    run = max_depth - 1 - chunk.count("[") - chunk.count("{")
    if run <= 0:
        return True
    pattern = _RUNS.get(run)
    if pattern is None:
        pattern = _RUNS[run] = re.compile(rf"^[ \t?:-]{{{run}}}", re.M)
    return pattern.search(chunk) is not None


_RUNS: dict[int, re.Pattern[str]] = {}
# Python's limit on the digits of an int made from or written as text (sys.get_int_max_str_digits)
_MAX_DIGITS = 4300
_LONG_DIGITS = re.compile(rf"[0-9]{{{_MAX_DIGITS + 1}}}")


def _fast_document(chunk: str, limits: YamlLimits) -> tuple[bool, Any]:
    """(True, data) when the fast parser can read this document exactly as PyYAML would, within
    the same limits (without anchors, the node count is bounded by the text: see max_nodes)."""
    rust = _rust()
    if rust is None or chunk[:1] in (":", "?", "&", "*") or any(s in chunk for s in _RAW_STOP):
        return False, None
    if _ASCII_UNREAD.search(chunk) if chunk.isascii() else re.search(_UNREAD, chunk):
        return False, None
    if "\r" in chunk and _LONE_CR.search(chunk):  # a line break to PyYAML, not to the Rust parser
        return False, None
    masked = chunk
    if _indicators(chunk):
        if "'" not in chunk and '"' not in chunk:
            return False, None
        masked = _QUOTED_VALUE.sub(r"\1''", chunk)
        if _indicators(masked):
            return False, None
    if len(chunk) // 2 >= limits.max_nodes or _too_deep(chunk, limits.max_depth):
        return False, None
    if len(chunk) > _MAX_DIGITS and _LONG_DIGITS.search(chunk):
        return False, None  # the Rust parser makes an int Python cannot print: PyYAML's path reports it
    text = chunk
    if _divergent(masked):
        # numbers only YAML 1.2 reads as numbers: quote them, and check that this changed nothing
        # but those values (a token inside a multi-line plain scalar would change more)
        quoted = _quote_strings(chunk)
        if quoted is None:
            return False, None
        text = quoted
    try:
        data = rust.loads(text, parse_datetime=False)
        if text is not chunk:
            budget = [text.count("'") - chunk.count("'")]
            budget[0] //= 2
            # a quoted token that YAML 1.2 reads as a string too (1.9.4, --flag=x) differs in nothing
            if not _only_quoted_differ(rust.loads(chunk, parse_datetime=False), data, budget):
                return False, None
    except Exception:
        return False, None
    # only single mappings: several documents, empty ones and top-level scalars or sequences are
    # left to the slow path, so that document counts and errors are the same either way
    if not isinstance(data, dict):
        return False, None
    # a flow mapping after a comma may be a key of the mapping around it (`{a: 1, {b: 2}}`), which
    # the Rust parser makes a frozenset and PyYAML refuses
    if _COMMA_FLOW_MAP.search(masked) and _collection_key(data):
        return False, None
    return True, data


_COMMA_FLOW_MAP = re.compile(r",[ \t]*[\[{]")


def _collection_key(data: Any) -> bool:
    if isinstance(data, dict):
        return any(isinstance(k, (tuple, frozenset)) or _collection_key(v) for k, v in data.items())
    if isinstance(data, list):
        return any(_collection_key(v) for v in data)
    return False


def iter_documents(text: str, limits: YamlLimits | None = None, fast: bool = False) -> Iterator[YamlDocument]:
    """Yield the documents of a YAML (or JSON) stream in order.

    With ``fast``, documents in the common subset of YAML 1.1 and 1.2 (no anchors, aliases,
    merge keys, tags or 1.1-only scalars) are read by the Rust parser into plain dicts, and their
    lines are looked up lazily (``YamlDocument.lines``); everything else, and every document the
    fast parser refuses, goes through PyYAML with line tracking, limits and duplicate-key checks.

    Raises ``yaml.YAMLError`` (with ``problem_mark``, lines counted from the start of the text) or
    :class:`YamlLimitError` at the first document that cannot be read; documents before it have
    been yielded already.
    """
    limits = limits or YamlLimits()
    fast = fast and _fast_pays(len(text))
    index = 0
    for chunk_no, (first_line, chunk) in enumerate(_chunks(text)):
        if len(chunk) > limits.max_document_bytes:
            raise YamlLimitError(
                f"document larger than {limits.max_document_bytes:,} bytes ({len(chunk):,})", first_line + 1
            )
        if fast:
            ok, data = _fast_document(chunk, limits)
            if ok:
                head = _CONTENT_START.match(chunk)  # always matches (perhaps nothing)
                start = first_line + (head.group().count("\n") if head else 0) + 1
                yield YamlDocument(
                    index, start, data, (), LineIndex(None, chunk, first_line, limits, plain=True), chunk_no, first_line
                )
                index += 1
                continue
        for doc in _slow_documents(chunk, first_line, limits, index):
            yield dataclasses.replace(doc, chunk=chunk_no, first_line=first_line)
            index += 1


def _slow_documents(chunk: str, first_line: int, limits: YamlLimits, index: int) -> Iterator[YamlDocument]:
    loader_cls = _CLoader if _c_composer_safe(chunk) else _PyLoader
    try:
        loader = loader_cls(chunk)
    except yaml.reader.ReaderError as e:
        _mark_reader_error(e, chunk, first_line)
        raise
    try:
        while loader.check_node():
            node = loader.get_node()
            if node is None:
                continue
            conv = _Converter(limits, first_line)
            data = conv.convert(node)
            yield YamlDocument(
                index, node.start_mark.line + first_line + 1, data, tuple(conv.duplicates), LineIndex(data)
            )
            index += 1
    except RecursionError:
        raise YamlLimitError("document nests too deeply to parse", first_line + 1) from None
    except yaml.MarkedYAMLError as e:
        # marks count from the chunk; report lines from the start of the text
        for attr in ("problem_mark", "context_mark"):
            mark = getattr(e, attr)
            if mark is not None:
                # types-PyYAML declares pointer an int, but PyYAML's C parser makes its marks with
                # buffer and pointer None, as here (pointer is read only with a buffer)
                setattr(e, attr, yaml.Mark(mark.name, mark.index, mark.line + first_line, mark.column, None, None))  # type: ignore[arg-type]
        raise
    except yaml.reader.ReaderError as e:
        _mark_reader_error(e, chunk, first_line, in_bytes=loader_cls is _CLoader)
        raise
    finally:
        loader.dispose()


def _mark_reader_error(e: yaml.reader.ReaderError, chunk: str, first_line: int, in_bytes: bool = False) -> None:
    """Give a ReaderError (a character PyYAML does not read: a control character) the mark the
    other errors have, lines counted from the start of the text, where it only has its position
    in the chunk (in characters; in UTF-8 bytes from LibYAML)."""
    pos = e.position if isinstance(e.position, int) else 0
    if in_bytes:
        pos = len(chunk.encode("utf-8", "surrogatepass")[:pos].decode("utf-8", "ignore"))
    pos = min(max(pos, 0), len(chunk))
    line_start = chunk.rfind("\n", 0, pos) + 1
    e.problem_mark = yaml.Mark(e.name, pos, chunk.count("\n", 0, pos) + first_line, pos - line_start, None, None)  # type: ignore[attr-defined,arg-type]
