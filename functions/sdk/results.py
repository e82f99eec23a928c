"""Results in the functions spec v1 schema: what a validator reports back to the orchestrator."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from .resource import Resource, plain

if TYPE_CHECKING:
    from ruamel.yaml.comments import CommentedMap

Severity = Literal["error", "warning", "info"]
SEVERITIES = ("error", "warning", "info")
_Mapping = TypeVar("_Mapping", bound=dict)


@dataclass(frozen=True)
class Field:
    """The field a result is about; values are plain data (copied out of the item)."""

    path: str
    current_value: Any = None
    proposed_value: Any = None


@dataclass(frozen=True)
class Result:
    message: str
    severity: Severity = "error"
    resource: Resource | None = None
    field: Field | None = None
    tags: dict[str, str] = dataclasses.field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.severity not in SEVERITIES:
            raise ValueError(f"severity must be one of {', '.join(SEVERITIES)}, not {self.severity!r}")

    def to_yaml(self) -> CommentedMap:
        """The result as the `results` entry the orchestrator reads."""
        from ruamel.yaml.comments import CommentedMap

        return self._entry(CommentedMap)

    def to_data(self, mapping: Callable[..., dict] = dict) -> dict:
        """The same entry built of `mapping`s (plain dicts unless told)."""
        return self._entry(mapping)

    def _entry(self, mapping: Callable[..., _Mapping]) -> _Mapping:
        out = mapping(message=self.message, severity=self.severity)
        if self.resource is not None:
            out["resourceRef"] = mapping(self.resource.ref)
            if self.resource.file is not None:
                out["file"] = mapping(self.resource.file)
        if self.field is not None:
            out["field"] = mapping(path=self.field.path)
            if self.field.current_value is not None:
                out["field"]["currentValue"] = plain(self.field.current_value)
            if self.field.proposed_value is not None:
                out["field"]["proposedValue"] = plain(self.field.proposed_value)
        if self.tags:
            out["tags"] = mapping((str(k), str(v)) for k, v in self.tags.items())
        return out

    def to_line(self) -> str:
        """One human line, for outputs that cannot carry results (a List or a bare stream)."""
        where = f"{self.resource.display}: " if self.resource is not None else ""
        at = f" (field {self.field.path})" if self.field is not None else ""
        file = self.resource.file if self.resource is not None else None
        in_file = f" [{file['path']}#{file['index']}]" if file else ""
        return f"{self.severity}: {where}{self.message}{at}{in_file}"
