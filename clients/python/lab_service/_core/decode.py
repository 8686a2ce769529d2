"""Turning JSON values into the models' fields, leniently: a field the server left out is None (written by hand)."""
import re
from datetime import datetime, timezone
from typing import Any, Callable, Dict, List, Mapping, Optional, TypeVar

T = TypeVar("T")

_ISO = re.compile(r"^(\d{4}-\d{2}-\d{2})[T ](\d{2}:\d{2}(?::\d{2})?)(?:\.(\d+))?(Z|[+-]\d{2}:?\d{2})?$", re.IGNORECASE)


def timestamp(value: Any) -> Any:
    """An ISO 8601 string as an aware datetime (UTC when no offset is given); anything else is kept as it came."""
    if not isinstance(value, str):
        return value
    match = _ISO.match(value.strip())
    if match is None:
        return value
    day, clock, fraction, offset = match.groups()
    if len(clock) == 5:
        clock += ":00"
    micros = (fraction or "").ljust(6, "0")[:6]
    zone = "+00:00" if offset is None or offset.upper() == "Z" else offset if ":" in offset else offset[:3] + ":" + offset[3:]
    try:
        parsed = datetime.fromisoformat(f"{day}T{clock}.{micros}{zone}")
    except ValueError:
        return value
    return parsed.astimezone(timezone.utc) if parsed.tzinfo is not None else parsed


def array(value: Any, item: Callable[[Any], T]) -> Any:
    return [item(entry) for entry in value] if isinstance(value, list) else value


def record(value: Any, item: Callable[[Any], T]) -> Any:
    return {key: item(entry) for key, entry in value.items()} if isinstance(value, dict) else value


def model(value: Any, cls: Any) -> Any:
    """A nested object as its model class; a value that is not an object is kept as it came."""
    return cls.from_wire(value) if isinstance(value, dict) else value


def field(data: Mapping[str, Any], name: str, convert: Optional[Callable[[Any], Any]] = None) -> Any:
    value = data.get(name)
    return value if value is None or convert is None else convert(value)


def wire(value: Any) -> Any:
    """An argument as JSON: models back to their wire form, datetimes to ISO 8601."""
    to_wire = getattr(value, "to_wire", None)
    if callable(to_wire):
        return to_wire()
    if isinstance(value, datetime):
        return value.isoformat().replace("+00:00", "Z")
    if isinstance(value, dict):
        return {key: wire(entry) for key, entry in value.items()}
    if isinstance(value, (list, tuple)):
        return [wire(entry) for entry in value]
    return value


def body(fields: Dict[str, Any]) -> Dict[str, Any]:
    """The JSON body of the arguments given: None means not given, and is left out."""
    return {name: wire(value) for name, value in fields.items() if value is not None}


def as_list(value: Any) -> List[Any]:
    return value if isinstance(value, list) else []
