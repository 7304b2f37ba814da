"""Safe, bounded YAML/JSON parsing that remembers where every mapping and key stands.

Mappings come back as :class:`LineDict` (a plain ``dict`` subclass, so ``json.dumps`` and Rego
engines take it as is) carrying ``line`` (1-based line of the mapping) and ``lines`` (key → line of
that key). Only the safe YAML tags construct; ``!!python/object`` and friends are errors. Alias
expansion and nesting depth are bounded per document, so an alias bomb is refused in milliseconds.
Duplicate keys are recorded (the last one wins, as in Kubernetes' YAML decoder warnings).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterator

import yaml
from yaml.constructor import ConstructorError
from yaml.nodes import MappingNode, Node, SequenceNode

try:  # LibYAML's C parser when available; same behaviour, several times faster
    _BaseLoader = yaml.CSafeLoader
except AttributeError:  # pragma: no cover - PyYAML built without LibYAML
    _BaseLoader = yaml.SafeLoader

__all__ = ["LineDict", "YamlLimits", "YamlLimitError", "YamlDocument", "iter_documents", "line_of"]

_MERGE_TAG = "tag:yaml.org,2002:merge"


class LineDict(dict):
    """A dict that knows its source line and the line of each key."""

    __slots__ = ("line", "lines")

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.line = 0
        self.lines: dict[Any, int] = {}


def line_of(obj: Any, key: Any = None, default: int = 0) -> int:
    """Line of ``obj[key]`` (or of ``obj`` itself when key is None), if known."""
    if isinstance(obj, LineDict):
        if key is None:
            return obj.line or default
        return obj.lines.get(key, obj.line or default)
    return default


@dataclass(frozen=True)
class YamlLimits:
    max_nodes: int = 1_000_000  # nodes per document after alias expansion
    max_depth: int = 200


class YamlLimitError(Exception):
    def __init__(self, message: str, line: int) -> None:
        super().__init__(message)
        self.line = line


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


def _check_limits(root: Node, limits: YamlLimits) -> None:
    """Expanded size and depth of a node graph, iteratively, each distinct node visited once."""
    size: dict[int, int] = {}
    depth: dict[int, int] = {}
    stack: list[tuple[Node, bool]] = [(root, False)]
    on_path: set[int] = set()
    while stack:
        node, done = stack.pop()
        nid = id(node)
        if done:
            on_path.discard(nid)
            if isinstance(node, MappingNode):
                kids = [n for pair in node.value for n in pair]
            elif isinstance(node, SequenceNode):
                kids = node.value
            else:
                kids = []
            s = 1 + sum(size[id(k)] for k in kids)
            d = 1 + max((depth[id(k)] for k in kids), default=0)
            if s > limits.max_nodes:
                raise YamlLimitError(
                    f"document expands to more than {limits.max_nodes:,} nodes (alias bomb?)",
                    node.start_mark.line + 1,
                )
            if d > limits.max_depth:
                raise YamlLimitError(f"document nests deeper than {limits.max_depth} levels", node.start_mark.line + 1)
            size[nid] = s
            depth[nid] = d
            continue
        if nid in size:
            continue
        if nid in on_path:  # recursive alias: a node that contains itself
            raise YamlLimitError("recursive alias", node.start_mark.line + 1)
        on_path.add(nid)
        stack.append((node, True))
        if isinstance(node, MappingNode):
            for k, v in node.value:
                stack.append((k, False))
                stack.append((v, False))
        elif isinstance(node, SequenceNode):
            for v in node.value:
                stack.append((v, False))


class _Loader(_BaseLoader):  # type: ignore[misc, valid-type]
    limits = YamlLimits()

    def __init__(self, stream: Any) -> None:
        super().__init__(stream)
        self.duplicates: list[DuplicateKey] = []

    def construct_document(self, node: Node) -> Any:
        _check_limits(node, self.limits)
        return super().construct_document(node)

    def construct_line_map(self, node: MappingNode) -> Iterator[LineDict]:
        data = LineDict()
        data.line = node.start_mark.line + 1
        yield data
        own = {id(k) for k, _ in node.value if k.tag != _MERGE_TAG}
        self.flatten_mapping(node)
        own_seen: set[Any] = set()
        lines = data.lines
        for key_node, value_node in node.value:
            key = self.construct_object(key_node, deep=False)
            try:
                hash(key)
            except TypeError:
                raise ConstructorError(
                    "while constructing a mapping", node.start_mark, "found unhashable key", key_node.start_mark
                ) from None
            if id(key_node) in own:
                if key in own_seen:
                    self.duplicates.append(
                        DuplicateKey(str(key), key_node.start_mark.line + 1, key_node.start_mark.column + 1)
                    )
                own_seen.add(key)
            data[key] = self.construct_object(value_node, deep=False)
            lines[key] = key_node.start_mark.line + 1


_Loader.add_constructor("tag:yaml.org,2002:map", _Loader.construct_line_map)


def iter_documents(text: str, limits: YamlLimits | None = None) -> Iterator[YamlDocument]:
    """Yield the documents of a YAML (or JSON) stream in order.

    Raises ``yaml.YAMLError`` (with ``problem_mark``) or :class:`YamlLimitError` at the first
    document that cannot be read; documents before it have been yielded already.
    """
    loader = _Loader(text)
    if limits is not None:
        loader.limits = limits
    try:
        index = 0
        while loader.check_node():
            node = loader.get_node()
            start = node.start_mark.line + 1 if node is not None else 0
            before = len(loader.duplicates)
            data = loader.construct_document(node) if node is not None else None
            yield YamlDocument(index, start, data, tuple(loader.duplicates[before:]))
            index += 1
    finally:
        loader.dispose()
